package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/session"
)

// Claude Code's tools (--tools claude-code): the names and parameters Claude models know
// from Claude Code, on the same implementation as Boris's own tools. Each handler maps
// its arguments to the Boris tool's; results and errors name Claude Code's tools and
// parameters through the server's face (see face.go). Go names that start with CC or cc
// are Claude Code's: CCBashArgs are the arguments of Claude Code's Bash.

// CCBashArgs are Bash's parameters.
type CCBashArgs struct {
	Command         string `json:"command" jsonschema:"The shell command or script to run."`
	Timeout         int    `json:"timeout,omitempty" jsonschema:"Timeout in milliseconds, at most 600000 (default: the server's --timeout). Does not apply with run_in_background."`
	Description     string `json:"description,omitempty" jsonschema:"What the command does, in a few words (not used by the server)."`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"Run the command in the background and return its id at once; read its output with BashOutput and stop it with KillShell."`
}

// ReadArgs are Read's parameters.
type ReadArgs struct {
	FilePath string `json:"file_path" jsonschema:"The file to read: an absolute path (a relative one is taken against the working directory)."`
	Offset   int    `json:"offset,omitempty" jsonschema:"The line number to start reading from (1 is the first line). Only needed when the file is too long to read at once."`
	Limit    int    `json:"limit,omitempty" jsonschema:"How many lines to read (default 2000). Only needed when the file is too long to read at once."`
}

// WriteArgs are Write's parameters.
type WriteArgs struct {
	FilePath string `json:"file_path" jsonschema:"The file to write: an absolute path (a relative one is taken against the working directory)."`
	Content  string `json:"content" jsonschema:"The whole content of the file, written exactly as given."`
}

// EditArgs are Edit's parameters.
type EditArgs struct {
	FilePath   string `json:"file_path" jsonschema:"The file to edit: an absolute path (a relative one is taken against the working directory)."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace, with its whitespace and indentation and without Read's line-number prefix. Empty creates a file that does not exist yet."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place; it must differ from old_string."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string (default false: it must occur exactly once)."`
}

// MultiEditArgs are MultiEdit's parameters.
type MultiEditArgs struct {
	FilePath string       `json:"file_path" jsonschema:"The file to edit: an absolute path (a relative one is taken against the working directory)."`
	Edits    []EditChange `json:"edits" jsonschema:"Edits to apply one after another, each to the result of the one before. Either all are made or none."`
}

// EditChange is one edit of MultiEdit.
type EditChange struct {
	OldString  string `json:"old_string" jsonschema:"The exact text to replace."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string (default false)."`
}

// GlobArgs are Glob's parameters.
type GlobArgs struct {
	Pattern string `json:"pattern" jsonschema:"The glob to match file paths against, such as '**/*.go' or 'src/**/*.{ts,tsx}'."`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search in; omit it for the working directory."`
}

// CCGrepArgs are Grep's parameters.
type CCGrepArgs struct {
	Pattern    string     `json:"pattern" jsonschema:"The regular expression to search for, in RE2 syntax (Go regexp: no lookaround or backreferences)."`
	Path       string     `json:"path,omitempty" jsonschema:"File or directory to search; defaults to the working directory."`
	Glob       string     `json:"glob,omitempty" jsonschema:"Only search files matching this glob, such as '*.js' or '*.{ts,tsx}'."`
	OutputMode OutputMode `json:"output_mode,omitempty" jsonschema:"content shows matching lines (with -A, -B, -C, -n, -o); files_with_matches (the default) lists files; count shows matches per file."`
	Before     int        `json:"-B,omitempty" jsonschema:"Lines to show before each match (content mode)."`
	After      int        `json:"-A,omitempty" jsonschema:"Lines to show after each match (content mode)."`
	Around     int        `json:"-C,omitempty" jsonschema:"Same as context."`
	Context    int        `json:"context,omitempty" jsonschema:"Lines to show before and after each match (content mode)."`
	LineNums   *bool      `json:"-n,omitempty" jsonschema:"Show line numbers (content mode). Default true."`
	IgnoreCase bool       `json:"-i,omitempty" jsonschema:"Case-insensitive search."`
	Only       bool       `json:"-o,omitempty" jsonschema:"Show only the matched parts of lines, one a line (content mode)."`
	Type       string     `json:"type,omitempty" jsonschema:"Only search files of this type, such as go, py, js, ts, rust, java."`
	HeadLimit  *int       `json:"head_limit,omitempty" jsonschema:"Show at most this many lines or entries (default 250; 0 for as many as fit the output budget)."`
	Offset     int        `json:"offset,omitempty" jsonschema:"Skip this many lines or entries first (default 0)."`
	Multiline  bool       `json:"multiline,omitempty" jsonschema:"Let patterns span lines, with '.' matching newlines (default false)."`
}

// BashOutputArgs are BashOutput's parameters.
type BashOutputArgs struct {
	BashID string `json:"bash_id" jsonschema:"The id Bash returned for a command run in the background."`
}

// KillShellArgs are KillShell's parameters.
type KillShellArgs struct {
	ShellID string `json:"shell_id" jsonschema:"The id Bash returned for a command run in the background."`
}

// CCTaskOutputArgs are TaskOutput's parameters.
type CCTaskOutputArgs struct {
	TaskID  string `json:"task_id" jsonschema:"The id Bash returned for a command run in the background."`
	Block   *bool  `json:"block,omitempty" jsonschema:"Wait for new output or for the task to end, up to timeout (default true)."`
	Timeout int    `json:"timeout,omitempty" jsonschema:"How long to wait with block, in milliseconds (default 30000, at most 600000)."`
}

// TaskStopArgs are TaskStop's parameters.
type TaskStopArgs struct {
	TaskID  string `json:"task_id,omitempty" jsonschema:"The id Bash returned for a command run in the background."`
	ShellID string `json:"shell_id,omitempty" jsonschema:"The same as task_id, under its older name."`
}

// ccGrepHeadLimit is Grep's head_limit when none is given, as in Claude Code.
const ccGrepHeadLimit = 250

// ccTaskWait is how long TaskOutput blocks by default, in milliseconds.
const ccTaskWait = 30_000

func addCCBash(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "Bash",
		Description: fmt.Sprintf(`Run a shell command with bash and return its exit code and output.

Each call is a fresh shell with no terminal and stdin at EOF; the working directory and exported variables persist from call to call (a cd or export holds for the next call). timeout is in milliseconds (default %d, at most 600000); on timeout the command's process group is stopped and the output so far is returned. Output keeps %d characters, stdout and stderr together: longer output shows its head and tail, and a line at the start and at the end names the file holding all of it.

With run_in_background the command keeps running and the call returns its id at once: read new output with BashOutput, stop it with KillShell.`, h.Config.Timeout.Milliseconds(), h.describedBudget()),
		Annotations: &mcp.ToolAnnotations{Title: "Bash", DestructiveHint: new(true), OpenWorldHint: new(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in CCBashArgs) (*mcp.CallToolResult, *BashResult, error) {
		return h.bash(ctx, req, BashArgs{Command: in.Command, Timeout: in.Timeout, RunInBackground: in.RunInBackground, Description: in.Description})
	})
}

func addRead(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "Read",
		Description: fmt.Sprintf(`Read a file. Text comes back as numbered lines, cat -n style: the line number, a tab, then the line (the numbers are not part of the file). Without offset and limit it shows the first 2000 lines, and at most %d characters: a note at the end says which offset and limit continue. Lines over 2000 characters are cut. PNG, JPEG, GIF and WebP files come back as images. A directory is listed two levels deep.%s`, h.describedFileBudget(),
			ifViewRule(h, " Read a file before changing it with Edit, MultiEdit or Write.", "")),
		InputSchema: schemaOf[ReadArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Read", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.ccRead)
}

func addWrite(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "Write",
		Description: "Write a file: create it, or replace all of an existing file's content. Missing parent directories are created; an existing file keeps its mode; the write is atomic." +
			ifViewRule(h, " An existing file must have been read with Read in this session first, and be unchanged since; otherwise the write is refused.", "") +
			" To change part of a file, use Edit.",
		InputSchema: schemaOf[WriteArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Write", DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
	}, h.ccWrite)
}

func addEdit(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "Edit",
		Description: "Replace text in a file. old_string must match the file exactly, indentation included, and occur exactly once (add surrounding lines to make it unique) unless replace_all is set. The file keeps its line endings, encoding and mode; the write is atomic." +
			ifViewRule(h, " Read the file in this session first; if it changed on disk since, Read it again.", "") +
			" The result shows the edited lines with their numbers; when old_string is not found, the error shows the closest lines.",
		InputSchema: schemaOf[EditArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Edit", DestructiveHint: new(true), OpenWorldHint: new(false)},
	}, h.ccEdit)
}

func addMultiEdit(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "MultiEdit",
		Description: "Make several replacements in one file at once. The edits apply in order, each to the result of the ones before, with Edit's rules; if any fails, none is made and the file is untouched." +
			ifViewRule(h, " Read the file in this session first.", ""),
		InputSchema: schemaOf[MultiEditArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "MultiEdit", DestructiveHint: new(true), OpenWorldHint: new(false)},
	}, h.ccMultiEdit)
}

func addGlob(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "Glob",
		Description: "Find files by glob pattern, such as '**/*.go' or 'src/**/*.{ts,tsx}', newest first. Hidden files, files excluded by .gitignore and node_modules are skipped and counted at the end. To search file contents, use Grep.",
		InputSchema: schemaOf[GlobArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Glob", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in GlobArgs) (*mcp.CallToolResult, any, error) {
		return h.find(ctx, req, FindArgs{Pattern: in.Pattern, Path: in.Path})
	})
}

func addCCGrep(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "Grep",
		Description: "Search file contents with a regular expression (RE2 syntax), like ripgrep, recursively from the working directory or path. output_mode files_with_matches (default) lists matching files, content shows matching lines, count counts them. head_limit (default 250) and offset page through results. Hidden files, files excluded by .gitignore, node_modules, binary and very large files are skipped, and the result ends with a line saying what was not searched.",
		InputSchema: optionalSchemaOf[CCGrepArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Grep", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in CCGrepArgs) (*mcp.CallToolResult, any, error) {
		limit := ccGrepHeadLimit
		if in.HeadLimit != nil {
			limit = *in.HeadLimit
		}
		return h.grep(ctx, req, GrepArgs{
			Pattern: in.Pattern, Path: in.Path, Glob: in.Glob, Type: in.Type, OutputMode: in.OutputMode,
			IgnoreCase: in.IgnoreCase, LineNums: in.LineNums, After: in.After, Before: in.Before,
			Around: in.Around, Context: in.Context, Multiline: in.Multiline, HeadLimit: limit,
			Offset: in.Offset, onlyMatching: in.Only,
		})
	})
}

const ccTaskOutputDescription = "Read what a background command started by Bash has written since the last read, and whether it is still running or how it ended. Output already read is not repeated."

func addBashOutput(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "BashOutput",
		Description: ccTaskOutputDescription + " Returns at once; call again later for more.",
		Annotations: &mcp.ToolAnnotations{Title: "BashOutput", ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in BashOutputArgs) (*mcp.CallToolResult, *TaskResult, error) {
		return h.taskOutput(ctx, req, TaskOutputArgs{TaskID: in.BashID})
	})
}

func addTaskOutputAlias(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "TaskOutput",
		Description: ccTaskOutputDescription + " With block (the default) it waits up to timeout for new output or for the command to end.",
		Annotations: &mcp.ToolAnnotations{Title: "TaskOutput", ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in CCTaskOutputArgs) (*mcp.CallToolResult, *TaskResult, error) {
		wait := 0
		if in.Block == nil || *in.Block {
			wait = ccTaskWait
			if in.Timeout > 0 {
				wait = in.Timeout
			}
		}
		return h.taskOutput(ctx, req, TaskOutputArgs{TaskID: in.TaskID, WaitMS: wait})
	})
}

const ccKillDescription = "Stop a background command started by Bash: its whole process group gets SIGTERM, then SIGKILL. Returns how it ended and any output not yet read."

func addKillShell(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "KillShell",
		Description: ccKillDescription,
		Annotations: &mcp.ToolAnnotations{Title: "KillShell", DestructiveHint: new(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in KillShellArgs) (*mcp.CallToolResult, *TaskResult, error) {
		return h.taskKill(ctx, req, TaskIDArgs{TaskID: in.ShellID})
	})
}

func addTaskStop(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "TaskStop",
		Description: ccKillDescription,
		Annotations: &mcp.ToolAnnotations{Title: "TaskStop", DestructiveHint: new(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in TaskStopArgs) (*mcp.CallToolResult, *TaskResult, error) {
		id := in.TaskID
		if id == "" {
			id = in.ShellID
		}
		if id == "" {
			return nil, nil, errorf(CodeInvalidArgument, "task_id is missing: give the id Bash returned for the background command")
		}
		return h.taskKill(ctx, req, TaskIDArgs{TaskID: id})
	})
}

func (h *handlers) ccRead(ctx context.Context, req *mcp.CallToolRequest, in ReadArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return nil, nil, errorf(CodeInvalidArgument, "offset and limit must not be negative: offset is the first line to read (from 1), limit how many lines")
	}
	var rng lineRange
	if in.Offset > 0 || in.Limit > 0 {
		first := max(in.Offset, 1)
		n := in.Limit
		if n == 0 {
			n = files.DefaultLines
		}
		rng = lineRange{first, first + n - 1}
	}
	res, err := h.viewPath(ctx, sess, in.FilePath, rng, in.Limit == 0)
	return res, nil, err
}

func (h *handlers) ccWrite(_ context.Context, req *mcp.CallToolRequest, in WriteArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	if err := h.readFirst(sess, in.FilePath, "Write"); err != nil {
		return nil, nil, err
	}
	s, err := h.create(sess, in.FilePath, in.Content)
	if err != nil {
		return nil, nil, err
	}
	return text(s), nil, nil
}

func (h *handlers) ccEdit(ctx context.Context, req *mcp.CallToolRequest, in EditArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	if in.OldString == in.NewString {
		return nil, nil, errorf(CodeInvalidArgument, "old_string and new_string are the same, so there is nothing to change")
	}
	if in.OldString == "" {
		s, err := h.createNew(sess, in.FilePath, in.NewString)
		if err != nil {
			return nil, nil, err
		}
		return text(s), nil, nil
	}
	if err := h.readFirst(sess, in.FilePath, "Edit"); err != nil {
		return nil, nil, err
	}
	s, err := h.replace(ctx, sess, in.FilePath, in.OldString, in.NewString, in.ReplaceAll)
	if err != nil {
		return nil, nil, err
	}
	return text(s), nil, nil
}

// createNew is Edit with an empty old_string: it creates a file that does not exist, or
// fills one that is empty.
func (h *handlers) createNew(sess *session.Session, path, content string) (string, error) {
	abs, err := sess.Resolve(path)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err == nil && info.Size() > 0 {
		return "", errorf(CodeInvalidArgument, "old_string is empty, which creates a new file, but %s already exists: give the text to replace, or use Write to replace the whole file", abs)
	}
	s, err := h.create(sess, path, content)
	return s, err
}

func (h *handlers) ccMultiEdit(ctx context.Context, req *mcp.CallToolRequest, in MultiEditArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMultiEdit(in.Edits); err != nil {
		return nil, nil, err
	}
	abs, err := sess.ResolveWrite(in.FilePath)
	if err != nil {
		return nil, nil, err
	}
	edits := in.Edits
	var start []byte
	existed := true
	if edits[0].OldString == "" {
		if info, err := os.Stat(abs); err == nil && info.Size() > 0 {
			return nil, nil, errorf(CodeInvalidArgument, "edit 1: old_string is empty, which creates a new file, but %s already exists; no edit was made", abs)
		}
		start, existed, edits = []byte(edits[0].NewString), false, edits[1:]
	} else {
		if err := h.readFirst(sess, in.FilePath, "MultiEdit"); err != nil {
			return nil, nil, err
		}
		if start, err = files.Read(sess.OpenRead, abs, h.Config.MaxFileSize); err != nil {
			return nil, nil, h.fileError(err, in.FilePath, sess)
		}
	}
	final, report, err := h.applyEdits(ctx, abs, start, edits, len(in.Edits)-len(edits), len(in.Edits))
	if err != nil {
		return nil, nil, err
	}
	if existed {
		// The file must still hold what the edits started from.
		now, err := files.Read(sess.OpenRead, abs, h.Config.MaxFileSize)
		if err != nil {
			return nil, nil, h.fileError(err, in.FilePath, sess)
		}
		if string(now) != string(start) {
			return nil, nil, errorf(CodeStale, "%s changed on disk while the edits were made; no edit was made: Read it again and retry", abs)
		}
	}
	if _, err := files.Create(sess.OpenWrite, abs, final, h.Config.MaxFileSize, false); err != nil {
		return nil, nil, h.fileError(err, in.FilePath, sess)
	}
	h.wrote(sess, abs, start, existed, final)
	verb := "Edited"
	if !existed {
		verb = "Created"
	}
	return text(fmt.Sprintf("%s %s: %s applied.\n%s", verb, abs, plural(len(in.Edits), "edit"), report)), nil, nil
}

// checkMultiEdit refuses edits that cannot all apply, before any is tried.
func checkMultiEdit(edits []EditChange) error {
	if len(edits) == 0 {
		return errorf(CodeInvalidArgument, "edits is empty: give at least one {old_string, new_string}")
	}
	for i, e := range edits {
		if e.OldString == e.NewString {
			return errorf(CodeInvalidArgument, "edit %d of %d: old_string and new_string are the same; no edit was made", i+1, len(edits))
		}
		if e.OldString == "" && i > 0 {
			return errorf(CodeInvalidArgument, "edit %d of %d: old_string is empty; only the first edit may have an empty old_string (to create the file); no edit was made", i+1, len(edits))
		}
	}
	return nil
}

// applyEdits makes edits one after another to start, in memory, so that abs changes only
// once all of them apply, and returns the content they make and a line for each. The
// edits are numbered from skipped+1, of total.
func (h *handlers) applyEdits(ctx context.Context, abs string, start []byte, edits []EditChange, skipped, total int) ([]byte, string, error) {
	data := start
	var b strings.Builder
	for i, e := range edits {
		r, err := files.ReplaceIn(ctx, abs, data, e.OldString, e.NewString, e.ReplaceAll, h.Config.MaxFileSize)
		if err != nil {
			return nil, "", withCode(codeOf(err), fmt.Errorf("edit %d of %d failed, so no edit was made and %s is unchanged: %w", skipped+i+1, total, abs, h.face().fileFacts(err)))
		}
		data = r.New
		fmt.Fprintf(&b, "edit %d: replaced %s, at line %s\n", skipped+i+1, plural(r.Count, "occurrence"), files.JoinLines(r.Lines))
	}
	return data, b.String(), nil
}

// readFirst enforces Claude Code's rule for Write and Edit: an existing file must have
// been read (or written) in this session, and must not have changed since.
func (h *handlers) readFirst(sess *session.Session, path, tool string) error {
	if !h.Config.RequireViewBeforeEdit {
		return nil
	}
	abs, err := sess.Resolve(path)
	if err != nil {
		return err
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a new file: nothing to have read
	}
	if err != nil || !info.Mode().IsRegular() {
		return nil // the tool itself reports what is wrong with it
	}
	seen, ok := sess.Seen(abs)
	if !ok {
		return errorf(CodeStale, "%s exists but has not been read in this session: Read it first, then %s it", abs, tool)
	}
	if seen == files.StatDigest(info) {
		return nil
	}
	if info.Size() > h.Config.MaxFileSize {
		return nil // too large to edit at all, which the tool itself says
	}
	if data, err := files.Read(sess.OpenRead, abs, h.Config.MaxFileSize); err == nil && seen == files.ContentDigest(data) {
		return nil
	}
	return errorf(CodeStale, "%s has changed on disk since it was last read (by a command, another tool or the user): Read it again, then %s it", abs, tool)
}
