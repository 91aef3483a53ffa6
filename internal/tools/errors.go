package tools

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/pathscope"
)

// Code is a stable short name for a kind of tool failure, for programs that branch on it.
// It starts the error text and is repeated in the result's _meta as "code".
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

// codeOf names the kind of failure err is.
func codeOf(err error) Code {
	var ce *codedError
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.Is(err, pathscope.ErrDenied):
		return CodeAccessDenied
	case errors.Is(err, pathscope.ErrInvalid):
		return CodeInvalidArgument
	case errors.Is(err, fs.ErrNotExist):
		return CodeNotFound
	case errors.Is(err, fs.ErrPermission):
		return CodeAccessDenied
	}
	return CodeFailed
}

// errorResult is the isError result for err: "CODE: message", with the code in _meta.
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
