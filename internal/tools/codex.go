package tools

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
	"github.com/mjkoo/boris/internal/watch"
)

// Codex's tools (--tools codex): the names, parameters, descriptions and result wording
// of the tools the Codex CLI 0.171.0 gives GPT models (exec_command, write_stdin,
// apply_patch in its JSON form, view_image), on the same core as Boris's own. An MCP tool
// cannot be freeform, so apply_patch takes the patch as "input", as Codex's JSON form of
// it does.

// codexVersion is the Codex CLI release whose tool definitions these match.
const codexVersion = "0.171.0"

// ExecCommandArgs are exec_command's parameters.
type ExecCommandArgs struct {
	Cmd                string             `json:"cmd"`
	Justification      string             `json:"justification,omitempty"`
	Login              bool               `json:"login,omitempty"`
	MaxOutputTokens    float64            `json:"max_output_tokens,omitempty"`
	PrefixRule         []string           `json:"prefix_rule,omitempty"`
	SandboxPermissions sandboxPermissions `json:"sandbox_permissions,omitempty"`
	Shell              string             `json:"shell,omitempty"`
	TTY                bool               `json:"tty,omitempty"`
	Workdir            string             `json:"workdir,omitempty"`
	YieldTimeMS        float64            `json:"yield_time_ms,omitempty"`
}

// sandboxPermissions is exec_command's sandbox_permissions. Boris has no approvals: it
// accepts the value and runs the command as any other.
type sandboxPermissions string

var sandboxValues = []any{"use_default", "require_escalated"}

// WriteStdinArgs are write_stdin's parameters. Codex declares its numbers as "number",
// and so do these: a fraction of a millisecond or a token is rounded.
type WriteStdinArgs struct {
	Chars           string  `json:"chars,omitempty"`
	MaxOutputTokens float64 `json:"max_output_tokens,omitempty"`
	SessionID       float64 `json:"session_id"`
	YieldTimeMS     float64 `json:"yield_time_ms,omitempty"`
}

// ExecResult is the structured form of exec_command's and write_stdin's result.
type ExecResult struct {
	WallTime           float64 `json:"wall_time_seconds" jsonschema:"How long the call waited, in seconds."`
	ExitCode           *int    `json:"exit_code,omitempty" jsonschema:"The process's exit code, once it has exited; 128+n when killed by signal n."`
	SessionID          int     `json:"session_id,omitempty" jsonschema:"The session ID of a process still running: poll it or type into it with write_stdin."`
	Status             string  `json:"status" jsonschema:"running, or how the process ended."`
	OriginalTokenCount int64   `json:"original_token_count" jsonschema:"The output's length in tokens of about 4 characters, before any was left out."`
	Output             string  `json:"output" jsonschema:"The output not read before, within max_output_tokens."`
}

// ApplyPatchArgs are apply_patch's parameters.
type ApplyPatchArgs struct {
	Input string `json:"input"`
}

// ViewImageArgs are view_image's parameters.
type ViewImageArgs struct {
	Path string `json:"path"`
}

// codexDocs are the parameter descriptions, as Codex words them.
var codexDocs = map[string]string{
	"cmd":                 "Shell command to execute.",
	"justification":       "User-facing approval question for `require_escalated`; omit otherwise.",
	"login":               "Request login-shell startup. Omit to inherit.",
	"max_output_tokens":   "Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy.",
	"prefix_rule":         "Reusable approval prefix for `cmd`, only with `sandbox_permissions: \"require_escalated\"`; for example [\"git\", \"pull\"].",
	"sandbox_permissions": "Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for unsandboxed execution.",
	"shell":               "Shell binary to launch. Defaults to the user's default shell.",
	"tty":                 "True allocates a PTY for the command; false or omitted uses plain pipes.",
	"workdir":             "Working directory for the command. Defaults to the turn cwd.",
	"chars":               "Bytes to write to stdin. Defaults to empty, which polls without writing.",
	"session_id":          "Identifier of the running unified exec session.",
	"input":               "The entire contents of the apply_patch command",
	"path":                "Local filesystem path to an image file.",
}

// yieldDocs are yield_time_ms's descriptions, which differ between the two tools.
var yieldDocs = map[string]string{
	"exec_command": "Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms.",
	"write_stdin":  "Wait before yielding output. Non-empty writes default to 250 ms and cap at 30000 ms; empty polls wait 5000-300000 ms by default.",
}

// codexSchema is the input schema of T with Codex's descriptions.
func codexSchema[T any](tool string) schemaFunc {
	return func() *jsonschema.Schema {
		s := plainOptional(schemaFor[T]())
		for name, p := range s.Properties {
			p.Description = codexDocs[name]
			if name == "yield_time_ms" {
				p.Description = yieldDocs[tool]
			}
		}
		return s
	}
}

// Unified exec limits, as Codex sets them (milliseconds, tokens).
const (
	execYieldDefault  = 10_000
	execYieldMin      = 250
	execYieldMax      = 30_000
	writeYieldDefault = 250
	pollYieldMin      = 5_000
	pollYieldMax      = 300_000
	outputTokens      = 10_000
	charsPerToken     = 4
	// minExecOutput is the least output a result shows, however small max_output_tokens.
	minExecOutput = 1_000
)

func addExecCommand(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "exec_command",
		Description: "Runs a command in a PTY, returning output or a session ID for ongoing interaction.",
		InputSchema: codexSchema[ExecCommandArgs]("exec_command"),
		Annotations: &mcp.ToolAnnotations{Title: "exec_command", DestructiveHint: new(true), OpenWorldHint: new(true)},
	}, h.execCommand)
}

func addWriteStdin(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "write_stdin",
		Description: "Writes characters to an existing unified exec session and returns recent output.",
		InputSchema: codexSchema[WriteStdinArgs]("write_stdin"),
		Annotations: &mcp.ToolAnnotations{Title: "write_stdin", DestructiveHint: new(true), OpenWorldHint: new(true)},
	}, h.writeStdin)
}

func addApplyPatch(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "apply_patch",
		Description: applyPatchDescription,
		InputSchema: codexSchema[ApplyPatchArgs]("apply_patch"),
		Annotations: &mcp.ToolAnnotations{Title: "apply_patch", DestructiveHint: new(true), OpenWorldHint: new(false)},
	}, h.applyPatch)
}

func addViewImage(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "view_image",
		Description: "View a local image file from the filesystem when visual inspection is needed. Use this for images already available on disk.",
		InputSchema: codexSchema[ViewImageArgs]("view_image"),
		Annotations: &mcp.ToolAnnotations{Title: "view_image", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.viewImage)
}

func (h *handlers) execCommand(ctx context.Context, req *mcp.CallToolRequest, in ExecCommandArgs) (*mcp.CallToolResult, *ExecResult, error) {
	switch {
	case strings.TrimSpace(in.Cmd) == "":
		return nil, nil, errorf(CodeInvalidArgument, "cmd is empty: pass the shell command to run")
	case strings.IndexByte(in.Cmd, 0) >= 0:
		return nil, nil, errorf(CodeInvalidArgument, "cmd contains a NUL byte, which no shell can be given: remove it (to print one, use printf '\\0')")
	}
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	dir, err := execDir(sess, in.Workdir)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	c := session.Command{Script: in.Cmd, Shell: h.Config.Shell, Dir: dir, Fallback: h.Config.Workdir,
		Grace: h.Config.KillGrace, Drain: h.Config.OutputDrain, MaxSpillFile: h.Config.MaxSpillFile, MaxSpillTotal: h.Config.MaxSpillTotal}
	tw := watch.CallFrom(ctx).NewTask() // the live view shows the command as a task
	if tw != nil {
		c.OnOutput = teeOutput(c.OnOutput, tw.Output)
	}
	if in.TTY {
		c.TTY = &shell.TTYSize{Rows: ttyRows, Cols: ttyCols}
	}
	t, _, _, err := sess.Start(c)
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	tw.Started(t.ID, c.Script, func() { _, _ = sess.Tasks.KillCause(t.ID, tasks.ErrStoppedByUser) }, t.Done(), t.Status)
	var notes []string
	if in.Shell != "" && filepath.Base(in.Shell) != filepath.Base(h.Config.Shell) {
		notes = append(notes, fmt.Sprintf("shell %s is not used here: commands run with %s", in.Shell, h.Config.Shell))
	}
	yield := clampMS(in.YieldTimeMS, execYieldDefault, execYieldMin, execYieldMax)
	if in.TTY {
		// A terminal's command comes back as soon as it waits for input, goes quiet or ends.
		x, err := sess.Tasks.Settle(ctx, t.ID, tasks.Until{Wait: yield}, h.execBudget(ctx, in.MaxOutputTokens), h.face().omitted)
		if err != nil {
			return nil, nil, taskError(err, sess, h.face())
		}
		if x.Why == tasks.WhyCancelled {
			_, _ = sess.Tasks.KillCause(t.ID, context.Cause(ctx))
		}
		return execSnapshot(t, start, x.Snapshot, notes)
	}
	if !settle(ctx, t, yield) && ctx.Err() != nil {
		// The call that started the command ended: the command ends with it.
		_, _ = sess.Tasks.KillCause(t.ID, context.Cause(ctx))
	}
	return h.execResult(ctx, sess, t, start, in.MaxOutputTokens, notes)
}

// execDir is the directory exec_command runs in: workdir, taken against the session's
// working directory, or that directory itself. A workdir the path rules (--allow-dir,
// --deny-dir) refuse to the file tools is refused too.
func execDir(sess *session.Session, workdir string) (string, error) {
	if workdir == "" {
		return "", nil
	}
	dir := workdir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(sess.Cwd(), dir)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", errorf(CodeNotFound, "workdir %s is not a directory (relative paths are taken against %s): give an existing directory, or leave workdir out", workdir, sess.Cwd())
	}
	if _, err := sess.Resolve(dir); err != nil {
		return "", errorf(codeOf(err), "workdir %s is refused: %w; give a directory the path rules allow, or leave workdir out", workdir, err)
	}
	return filepath.Clean(dir), nil
}

// clampMS is ms within [lo, hi], or def when ms is not given.
func clampMS(ms float64, def, lo, hi int) time.Duration {
	n := def
	if ms > 0 {
		n = int(min(math.Round(ms), float64(hi)))
	}
	return time.Duration(min(max(n, lo), hi)) * time.Millisecond
}

// settle waits until task t ends, wait passes or ctx ends, and reports whether t ended.
func settle(ctx context.Context, t *tasks.Task, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.Done():
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

func (h *handlers) writeStdin(ctx context.Context, req *mcp.CallToolRequest, in WriteStdinArgs) (*mcp.CallToolResult, *ExecResult, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	if in.SessionID != math.Trunc(in.SessionID) || math.Abs(in.SessionID) > 1<<31 {
		return nil, nil, errorf(CodeInvalidArgument, "session_id %v is not a session ID: give the whole number exec_command returned", in.SessionID)
	}
	id := "task-" + strconv.Itoa(int(in.SessionID))
	t, err := h.execSession(sess, id, int(in.SessionID))
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	if t.TTY() {
		return h.writeTTY(ctx, sess, t, in, start)
	}
	switch in.Chars {
	case "":
		settle(ctx, t, clampMS(in.YieldTimeMS, pollYieldMin, pollYieldMin, pollYieldMax))
	case "\x03":
		// Ctrl-C: a process without a terminal is stopped as a terminal would have it.
		if _, err := sess.Tasks.Kill(id); err != nil {
			return nil, nil, taskError(err, sess, h.face())
		}
		settle(ctx, t, clampMS(in.YieldTimeMS, writeYieldDefault, execYieldMin, execYieldMax))
	default:
		return nil, nil, errorf(CodeInvalidArgument, "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open (to stop it, write \"\\u0003\")")
	}
	return h.execResult(ctx, sess, t, start, in.MaxOutputTokens, nil)
}

// writeTTY is write_stdin to a command in a terminal: it types chars (a poll when empty)
// and returns once the program waits for input again, goes quiet or ends, or yield_time_ms
// passes.
func (h *handlers) writeTTY(ctx context.Context, sess *session.Session, t *tasks.Task, in WriteStdinArgs, start time.Time) (*mcp.CallToolResult, *ExecResult, error) {
	budget, hint := h.execBudget(ctx, in.MaxOutputTokens), h.face().omitted
	var x tasks.Exchange
	var err error
	if in.Chars == "" {
		until := tasks.Until{Wait: clampMS(in.YieldTimeMS, pollYieldMin, pollYieldMin, pollYieldMax)}
		x, err = sess.Tasks.Settle(ctx, t.ID, until, budget, hint)
	} else {
		until := tasks.Until{Wait: clampMS(in.YieldTimeMS, writeYieldDefault, execYieldMin, execYieldMax)}
		x, err = sess.Tasks.Send(ctx, t.ID, []byte(in.Chars), nil, until, budget, hint)
	}
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	return execSnapshot(t, start, x.Snapshot, nil)
}

// execSession returns the task behind a unified exec session id.
func (h *handlers) execSession(sess *session.Session, id string, n int) (*tasks.Task, error) {
	for _, t := range sess.Tasks.List() {
		if t.ID == id && !t.Drained() {
			return t, nil
		}
	}
	var ids []string
	for _, t := range sess.Tasks.List() {
		if !t.Drained() {
			ids = append(ids, strings.TrimPrefix(t.ID, "task-"))
		}
	}
	known := "no process is running"
	if len(ids) > 0 {
		known = "running: " + strings.Join(ids, ", ")
	}
	return nil, errorf(CodeNotFound, "Unknown process id %d (%s); a session ID is valid until its process has exited and its output has been read", n, known)
}

// execResult is exec_command's and write_stdin's result, as Codex words it: the wall
// time, the exit code or the session ID of a process still running, and the output not
// read before, within max_output_tokens (as tokens of about 4 characters).
func (h *handlers) execResult(ctx context.Context, sess *session.Session, t *tasks.Task, start time.Time, maxTokens float64, notes []string) (*mcp.CallToolResult, *ExecResult, error) {
	snap, err := sess.Tasks.Output(ctx, t.ID, 0, h.execBudget(ctx, maxTokens), h.face().omitted)
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	return execSnapshot(t, start, snap, notes)
}

// execSnapshot is the exec result of task t, begun at start, showing snap.
func execSnapshot(t *tasks.Task, start time.Time, snap tasks.Snapshot, notes []string) (*mcp.CallToolResult, *ExecResult, error) {
	out := &ExecResult{WallTime: time.Since(start).Seconds(), Status: snap.Status}
	if res, ok := t.Result(); ok && !snap.Running {
		out.ExitCode = &res.ExitCode
	} else {
		out.SessionID, _ = strconv.Atoi(strings.TrimPrefix(t.ID, "task-"))
	}
	full := int64(snap.Stdout.To.Chars - snap.Stdout.From.Chars + snap.Stderr.To.Chars - snap.Stderr.From.Chars)
	out.OriginalTokenCount = (full + charsPerToken - 1) / charsPerToken
	var o strings.Builder
	if snap.Stderr.Text == "" {
		var cut []string
		for _, n := range omitted(snap.Stdout, snap.Stderr) {
			cut = append(cut, "cut: "+n)
		}
		bothEnds(&o, cut, func(b *strings.Builder) { b.WriteString(snap.Stdout.Text) })
	} else {
		writeStreams(&o, snap.Stdout.Text, snap.Stderr.Text, omitted(snap.Stdout, snap.Stderr))
	}
	out.Output = o.String()
	return text(formatExec(out, notes)), out, nil
}

// execBudget is how many characters of output an exec result shows: max_output_tokens
// (as tokens of about 4 characters; Codex's default 10,000), within the server's budget
// for one result, which is sized for what the clients keep whole.
func (h *handlers) execBudget(ctx context.Context, maxTokens float64) int {
	tokens := outputTokens
	if maxTokens > 0 {
		tokens = int(min(math.Round(maxTokens), 1<<40))
	}
	return min(max(tokens*charsPerToken, minExecOutput), h.contentBudget(ctx))
}

// formatExec words an exec result as Codex does.
func formatExec(r *ExecResult, notes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Wall time: %.4f seconds\n", r.WallTime)
	if r.ExitCode != nil {
		fmt.Fprintf(&b, "Process exited with code %d\n", *r.ExitCode)
	} else {
		fmt.Fprintf(&b, "Process running with session ID %d\n", r.SessionID)
	}
	fmt.Fprintf(&b, "Original token count: %d\n", r.OriginalTokenCount)
	for _, n := range notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	b.WriteString("Output:\n")
	b.WriteString(r.Output)
	return b.String()
}

func (h *handlers) viewImage(ctx context.Context, req *mcp.CallToolRequest, in ViewImageArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	abs, err := sess.Resolve(in.Path)
	if err != nil {
		return nil, nil, err
	}
	v, err := files.View(ctx, abs, files.ViewOptions{MaxFileSize: h.Config.MaxFileSize, Open: sess.OpenRead, Start: 1, End: 1})
	if err != nil {
		return nil, nil, h.fileError(err, in.Path, sess)
	}
	if v.MIME == "" {
		return nil, nil, errorf(CodeUnsupported, "%s is not an image (PNG, JPEG, GIF or WebP): read a text file with exec_command, for example sed -n '1,200p' %s", abs, abs)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: v.Image, MIMEType: v.MIME}}}, nil, nil
}
