package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/search"
)

// EntryKind is what find lists.
type EntryKind string

// FindArgs are find's parameters.
type FindArgs struct {
	Pattern   string    `json:"pattern" jsonschema:"Glob to match paths against, e.g. '**/*.go', 'src/**/test_*.py', '*.{ts,tsx}'. '*' and '?' stay within one path segment, '**' spans directories, {a,b} lists alternatives. A pattern without a slash matches names at any depth; one with a slash matches the path relative to path ('./*.go': top level only). Absolute patterns work."`
	Path      string    `json:"path,omitempty" jsonschema:"Directory to search in, absolute or relative to the working directory. Defaults to the working directory."`
	Type      EntryKind `json:"type,omitempty" jsonschema:"file (default) lists files, dir lists directories, any lists both."`
	HeadLimit int       `json:"head_limit,omitempty" jsonschema:"Show at most this many paths. Default: as many as fit the output budget."`
	Offset    int       `json:"offset,omitempty" jsonschema:"Skip this many paths first, to page through long results."`
	Hidden    bool      `json:"hidden,omitempty" jsonschema:"Also list hidden files and directories (names starting with '.'); .git is never entered."`
	NoIgnore  bool      `json:"no_ignore,omitempty" jsonschema:"Also list paths excluded by .gitignore, .ignore and .git/info/exclude, and node_modules directories."`
}

const findDescription = `Find files (or directories) by glob pattern, such as '**/*.go' or 'src/**/*.{ts,tsx}'. Fast on large trees.

- Paths are listed newest first (most recently modified), relative to the working directory; a name with a control character (such as a newline) is quoted, Go-style: "a\nb.txt".
- Skips, and counts at the end of the result, hidden paths, paths excluded by .gitignore/.ignore and node_modules directories; set hidden or no_ignore to include them (a path inside node_modules searches it).
- Results are paged: head_limit and offset select paths; the note at the end says how to get more.
- To search file contents, use grep.`

var entryKinds = []any{"file", "dir", "any"}

func addFind(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "find",
		Title:       "Find files by glob",
		Description: findDescription,
		InputSchema: schemaOf[FindArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Find files by glob", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.find)
}

func (h *handlers) find(ctx context.Context, req *mcp.CallToolRequest, in FindArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	pattern := strings.TrimSpace(in.Pattern)
	if pattern == "" {
		return nil, nil, errorf(CodeInvalidArgument, "pattern is empty: give a glob such as '**/*.go'")
	}
	if in.HeadLimit < 0 || in.Offset < 0 {
		return nil, nil, errorf(CodeInvalidArgument, "head_limit and offset must not be negative")
	}
	kind, ok := map[EntryKind]search.EntryType{"": search.Files, "file": search.Files, "dir": search.Dirs, "any": search.FilesAndDirs}[in.Type]
	if !ok {
		return nil, nil, errorf(CodeInvalidArgument, "type %q is not one of file, dir, any", in.Type)
	}
	path, pattern, err := search.SplitPattern(in.Path, pattern)
	if err != nil {
		return nil, nil, upwardError(in.Pattern)
	}
	root, shown, err := searchRoot(sess.Cwd(), path, sess.Resolve)
	if err != nil {
		return nil, nil, err
	}
	p := newPager(in.HeadLimit, in.Offset, h.contentBudget(ctx))
	p.maxLines = h.budget(ctx).Lines
	res, err := search.Find(ctx, scopeOf(sess), root, search.FindOptions{
		Filter:  h.filter(sess.Cwd(), in.Hidden, in.NoIgnore, nil, ""),
		Pattern: pattern,
		Type:    kind,
		Keep:    p.keep(),
		Indexes: h.Indexes,
	})
	if err != nil {
		return nil, nil, h.searchError(err)
	}
	noun := map[search.EntryType]string{search.Files: "file", search.Dirs: "directory", search.FilesAndDirs: "path"}[kind]
	var b strings.Builder
	if res.Matched == 0 {
		fmt.Fprintf(&b, "No %s matches %s in %s\n", noun, search.QuotePattern(in.Pattern), shown)
	} else {
		fmt.Fprintf(&b, "Found %s matching %s (newest first):\n", pluralNoun(res.Matched, noun), search.QuotePattern(in.Pattern))
	}
	rel := relativizer(sess.Cwd(), root, shown)
	p.total = res.Matched
	for _, e := range res.Entries {
		s := rel(e.Path)
		if e.Dir {
			s += "/"
		}
		if !p.add(&b, s+"\n") {
			break
		}
	}
	b.WriteString(p.note())
	b.WriteString(skippedNote(-1, "", res.Skipped, h.Config.MaxFileSize, h.face()))
	return text(p.lead(b.String())), nil, nil
}
