package tools

import (
	"context"
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

// coded turns a handler's plain errors into isError results with a code. Protocol errors
// never come from handlers: a tool failure is data for the model.
func coded[In, Out any](h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		res, out, err := h(ctx, req, in)
		if err != nil {
			var zero Out
			return errorResult(err), zero, nil
		}
		return res, out, nil
	}
}

// text is a plain successful result.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// ArgumentErrors is receiving middleware that gives the SDK's own argument-validation
// failures (wrong types, unknown or missing fields) the same shape as tool errors: an
// INVALID_ARGUMENT code and a hint. Errors from handlers already carry a code.
func ArgumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || r.Meta["code"] != nil || len(r.Content) != 1 {
			return res, err
		}
		tc, ok := r.Content[0].(*mcp.TextContent)
		if !ok {
			return res, err
		}
		name := req.(*mcp.CallToolRequest).Params.Name
		tc.Text = fmt.Sprintf("%s: %s; check the argument names and types in the %s tool's input schema", CodeInvalidArgument, tc.Text, name)
		r.Meta = mcp.Meta{"code": string(CodeInvalidArgument)}
		return r, nil
	}
}
