package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool with a typed handler, as mcp.AddTool does, with the same
// schemas and the same checks, but a lighter path for every call: the arguments are
// decoded once into a map to be validated and once into In, and the structured result is
// encoded once. (mcp.AddTool decodes the arguments three times, each time through a
// decoder with a fresh 32 kB buffer, re-encodes them, and decodes and validates its own
// output again; on a call that runs `true` that was a tenth of what Boris added.)
//
// A handler's error becomes an isError result with a code ([errorResult]); arguments that
// do not fit the input schema get INVALID_ARGUMENT and a hint.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	tt := *t
	if tt.InputSchema == nil {
		tt.InputSchema = mustSchema(reflect.TypeFor[In]())
	}
	input, err := tt.InputSchema.(*jsonschema.Schema).Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Errorf("tool %s: input schema: %w", t.Name, err))
	}
	// A typed nil result is shown as the zero value of what it points to, never null.
	var zeroOut any
	if rt := reflect.TypeFor[Out](); rt != reflect.TypeFor[any]() {
		if rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
			zeroOut = reflect.Zero(rt).Interface()
		}
		if tt.OutputSchema == nil {
			tt.OutputSchema = mustSchema(rt)
		}
	}
	s.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := decodeArgs[In](req.Params.Arguments, input)
		if err != nil {
			return errorResult(errorf(CodeInvalidArgument, "%v; check the argument names and types in the %s tool's input schema", err, t.Name)), nil
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			res = errorResult(err)
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		var structured any = out
		if zeroOut != nil && reflect.ValueOf(out).IsNil() {
			structured = zeroOut
		}
		if structured != nil {
			b, err := json.Marshal(structured)
			if err != nil {
				return nil, fmt.Errorf("encoding the %s result: %w", t.Name, err)
			}
			res.StructuredContent = json.RawMessage(b)
			if res.Content == nil {
				res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
			}
		}
		return res, nil
	})
}

// decodeArgs validates the arguments against the input schema, then decodes them.
func decodeArgs[In any](args json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var in In
	m := map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &m); err != nil {
			return in, fmt.Errorf("validating \"arguments\": arguments must be a JSON object: %v", err)
		}
	}
	if err := schema.Validate(m); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	if len(args) > 0 {
		// Names match exactly: validation refused any other spelling.
		if err := json.Unmarshal(args, &in); err != nil {
			return in, fmt.Errorf("decoding \"arguments\": %v", err)
		}
	}
	return in, nil
}

func mustSchema(t reflect.Type) *jsonschema.Schema {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Errorf("schema for %v: %w", t, err)) // a programmer mistake found at startup
	}
	return s
}
