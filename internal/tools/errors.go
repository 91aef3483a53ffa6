package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/pathscope"
	"github.com/mjkoo/boris/internal/search"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/tasks"
)

// Code is a stable short name for a kind of tool failure, for programs that branch on it.
// It starts the error text (and is the structured error's code with --structured-output).
type Code string

// Error codes. Keep them stable: clients match on them.
const (
	CodeInvalidArgument Code = "INVALID_ARGUMENT"
	CodeAccessDenied    Code = "ACCESS_DENIED"
	CodeNotFound        Code = "NOT_FOUND"
	CodeTooLarge        Code = "TOO_LARGE"
	CodeUnsupported     Code = "UNSUPPORTED_FILE"
	CodeNoMatch         Code = "NO_MATCH"
	CodeAmbiguous       Code = "AMBIGUOUS_MATCH"
	CodeStale           Code = "STALE_VIEW"
	CodeLimit           Code = "LIMIT_REACHED"
	CodeFailed          Code = "FAILED"
	CodeTaskEnded       Code = "TASK_ENDED"
)

type codedError struct {
	code Code
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// errorf returns an error carrying code, formatted like fmt.Errorf (so %w works).
func errorf(code Code, format string, args ...any) error {
	return &codedError{code: code, err: fmt.Errorf(format, args...)}
}

// withCode attaches code to err unless it already carries one.
func withCode(code Code, err error) error {
	var ce *codedError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	return &codedError{code: code, err: err}
}

// codes is the one table from the errors the packages below tools return to the code a
// result carries; the first entry err wraps gives its code. An error made with [errorf]
// or [withCode] carries its own. Anything else is FAILED.
var codes = []struct {
	err  error
	code Code
}{
	{pathscope.ErrDenied, CodeAccessDenied},
	{pathscope.ErrInvalid, CodeInvalidArgument},
	{files.ErrInvalid, CodeInvalidArgument},
	{files.ErrLossy, CodeInvalidArgument},
	{files.ErrTooLarge, CodeTooLarge},
	{files.ErrUnsupported, CodeUnsupported},
	{files.ErrNoMatch, CodeNoMatch},
	{files.ErrAmbiguous, CodeAmbiguous},
	{files.ErrNotViewed, CodeStale},
	{files.ErrStale, CodeStale},
	{search.ErrPattern, CodeInvalidArgument},
	{search.ErrFilter, CodeInvalidArgument},
	{search.ErrUpward, CodeInvalidArgument},
	{search.ErrRoot, CodeInvalidArgument},
	{tasks.ErrUnknown, CodeNotFound},
	{tasks.ErrLimit, CodeLimit},
	{tasks.ErrTTYLimit, CodeLimit},
	{tasks.ErrNoTTY, CodeInvalidArgument},
	{tasks.ErrEnded, CodeTaskEnded},
	{fs.ErrNotExist, CodeNotFound},
	{fs.ErrPermission, CodeAccessDenied},
}

// codeOf names the kind of failure err is.
func codeOf(err error) Code {
	if ce, ok := errors.AsType[*codedError](err); ok {
		return ce.code
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeFailed
}

// The errors below keep their code from [codes] and add what the model needs to act on
// them.

// fileError words a file that does not exist with where relative paths start, and the
// errors of the files package that state facts in the names of this server's tools (see
// [face.fileFacts]); other errors of the file tools are worded where they arise.
func (h *handlers) fileError(err error, path string, sess *session.Session) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errorf(CodeNotFound, "%s does not exist (relative paths are taken against the working directory, %s)", path, sess.Cwd())
	}
	return h.face().fileFacts(err)
}

// taskError words a tasks error with what to do next.
func taskError(err error, sess *session.Session, f *face) error {
	list := ""
	if f.taskList != "" {
		list = " (" + f.taskList + " shows them)"
	}
	switch {
	case errors.Is(err, tasks.ErrUnknown):
		var ids []string
		for _, t := range sess.Tasks.List() {
			ids = append(ids, t.ID)
		}
		known := "this session has no tasks"
		if len(ids) > 0 {
			known = "this session's tasks: " + strings.Join(ids, ", ")
		}
		return fmt.Errorf("%w; %s%s", err, known, list)
	case errors.Is(err, tasks.ErrLimit):
		return fmt.Errorf("%w; stop one with %s or wait for one to end%s", err, f.taskKill, list)
	}
	return err
}

// searchError words a path a search cannot start from.
func (h *handlers) searchError(err error) error {
	re, ok := errors.AsType[*search.RootError](err)
	switch {
	case !ok:
		return err
	case re.Special:
		return fmt.Errorf("%w; %s does not read FIFOs, sockets or devices", err, h.face().grep)
	}
	return fmt.Errorf("%w; give %s the directory to search", err, h.face().find)
}

// upwardError words [search.ErrUpward] for the pattern given.
func upwardError(pattern string) error {
	return errorf(CodeInvalidArgument, "pattern %q goes through '..', but patterns only match below the search path: set path to the directory to search instead (for example path \"..\" with pattern \"**/*.go\")", pattern)
}

// errorResult is the isError result for err: "CODE: message". The code is also in _meta,
// for the audit log and the live view; the server sends the result without it.
func errorResult(err error) *mcp.CallToolResult {
	code := codeOf(err)
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(code) + ": " + err.Error()}},
		Meta:    mcp.Meta{"code": string(code)},
	}
}

// text is a plain successful result.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
