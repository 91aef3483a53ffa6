package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/watch"
)

// addTool registers a tool with a typed handler, as mcp.AddTool does, with the same
// schemas and the same checks, but a lighter path for every call: the arguments are
// decoded once into a map to be validated and once into In, and the structured result is
// encoded once. (mcp.AddTool decodes the arguments three times, each time through a
// decoder with a fresh 32 kB buffer, re-encodes them, and decodes and validates its own
// output again; on a call that runs `true` that was a tenth of what Boris added.)
//
// A handler's error becomes an isError result with a code ([errorResult]); arguments that
// do not fit the input schema get INVALID_ARGUMENT and a hint. Otherwise results are the
// SDK's, as TestAddToolMatchesSDK checks; unlike the SDK, a *jsonrpc.Error from a handler
// is a tool error too (no handler returns one) and the structured result is not checked
// against the output schema.
//
// Results are text only unless --structured-output is set: then a handler's structured
// result becomes structuredContent, described by an outputSchema. Some clients (Claude
// Code) show the model only the structured form when there is one, so by default the
// model reads the text, with its layout and hints.
func addTool[In, Out any](s *mcp.Server, hs *handlers, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	structuredOn := hs.Config.StructuredOutput
	h = checkpointed(hs, t.Name, h)
	tt := *t
	build := schemaBuilder[In](t.InputSchema)
	tt.InputSchema = inputSchemaJSON(t.Name, build)
	// Built and resolved on the first call rather than at start, where building,
	// encoding and resolving the schemas were most of the time registering took.
	checks := sync.OnceValues(func() (quickCheck, *jsonschema.Resolved) {
		schema := build()
		input, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			panic(fmt.Errorf("tool %s: input schema: %w", t.Name, err)) // a programmer mistake
		}
		return newQuickCheck(schema), input
	})
	// A typed nil result is shown as the zero value of what it points to, never null.
	var zeroOut any
	if rt := reflect.TypeFor[Out](); structuredOn && rt != reflect.TypeFor[any]() {
		if rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
			zeroOut = reflect.Zero(rt).Interface()
		}
		if tt.OutputSchema == nil {
			tt.OutputSchema = withErrorFields(mustSchema(rt))
		}
	}
	s.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		quick, input := checks()
		ctx = withClient(ctx, req)
		var res *mcp.CallToolResult
		var out Out
		in, err := decodeArgs[In](req.Params.Arguments, quick, input)
		if err != nil {
			err = errorf(CodeInvalidArgument, "%v; check the parameter names and types in the %s tool's input schema", err, t.Name)
		} else {
			res, out, err = h(ctx, req, in)
		}
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
		if !res.IsError {
			watch.CallFrom(ctx).SetResult(structured) // the live view shows exit status and the like
		} else if err != nil {
			// Clients that show the model only the structured form must show it the error.
			structured = errorStructured(err)
		}
		if structured != nil && structuredOn {
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

// ErrorResult is the structured form of every tool's error result, as its text says it.
type ErrorResult struct {
	Error string `json:"error" jsonschema:"What went wrong and what to do next, as the text result says it."`
	Code  string `json:"code" jsonschema:"The kind of failure, such as NOT_FOUND or INVALID_ARGUMENT; it also starts the text result."`
}

// errorStructured is the structured form of err's result.
func errorStructured(err error) *ErrorResult {
	return &ErrorResult{Error: err.Error(), Code: string(codeOf(err))}
}

// withErrorFields adds the fields of [ErrorResult] to a tool's output schema, so that an
// error's structured form fits the schema the tool declares.
func withErrorFields(s *jsonschema.Schema) *jsonschema.Schema {
	e := mustSchema(reflect.TypeFor[ErrorResult]())
	for name, p := range e.Properties {
		if _, ok := s.Properties[name]; !ok {
			s.Properties[name] = p
		}
	}
	return s
}

// decodeArgs validates the arguments against the input schema, then decodes them. A
// null stands for a parameter not given ([withoutNulls]). Arguments that pass the quick
// check are decoded at once; the others are validated in full, and a refusal names the
// parameter and what it must be ([argsError]).
func decodeArgs[In any](args json.RawMessage, quick quickCheck, schema *jsonschema.Resolved) (In, error) {
	var in In
	args = withoutNulls(args)
	if !quick.passes(args) {
		m := map[string]any{}
		if len(args) > 0 {
			if err := json.Unmarshal(args, &m); err != nil {
				return in, fmt.Errorf("the arguments must be a JSON object of parameters: %v", err)
			}
		}
		if err := schema.Validate(m); err != nil {
			return in, argsError(schema.Schema(), m, err)
		}
	}
	if len(args) > 0 {
		// Names match exactly: validation refused any other spelling.
		if err := json.Unmarshal(args, &in); err != nil {
			// JSON Schema counts 1500.0 and 1.5e3 as integers; Go's decoder does not.
			if json.Unmarshal(integralNumbers(args), &in) != nil {
				return in, fmt.Errorf("decoding \"arguments\": %v", err)
			}
		}
	}
	return in, nil
}

// integralNumbers rewrites the numbers in args that have integer values (1500.0, 1.5e3)
// as integers.
func integralNumbers(args json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return args
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			if f, err := v.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return args
	}
	return b
}

// quickCheck validates the common case without the general validator, which costs
// tens of microseconds a call (and a deep stack) for a handful of plain values. It
// knows the properties whose schema is a bare type (string, integer, number, boolean),
// and passes arguments that hold only such properties, each of its type, and every
// required one. Anything else goes to the full validation.
type quickCheck struct {
	types    map[string]string // property name → JSON type, for bare-typed properties
	required []string
}

func newQuickCheck(s *jsonschema.Schema) quickCheck {
	q := quickCheck{types: map[string]string{}, required: s.Required}
	if !onlyKeys(s, "type", "description", "title", "properties", "required", "additionalProperties") || s.Type != "object" {
		q.types = nil // constraints on the whole object: always validate in full
		return q
	}
	for name, p := range s.Properties {
		switch p.Type {
		case "string", "integer", "number", "boolean":
			if onlyKeys(p, "type", "description", "title") {
				q.types[name] = p.Type
			}
		}
	}
	return q
}

// onlyKeys reports whether s, as JSON, sets no keyword but those listed.
func onlyKeys(s *jsonschema.Schema, keys ...string) bool {
	b, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return false
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

func (q quickCheck) passes(args json.RawMessage) bool {
	if q.types == nil {
		return false
	}
	var m map[string]json.RawMessage
	if len(args) > 0 {
		if err := json.Unmarshal(args, &m); err != nil {
			return false
		}
	}
	for name, v := range m {
		if t, ok := q.types[name]; !ok || !isJSONType(v, t) {
			return false
		}
	}
	for _, name := range q.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	return true
}

// isJSONType reports whether the JSON value v is plainly of type t. Integers written
// with a fraction or an exponent are left to the full validation.
func isJSONType(v json.RawMessage, t string) bool {
	if len(v) == 0 {
		return false
	}
	switch t {
	case "string":
		return v[0] == '"'
	case "boolean":
		return string(v) == "true" || string(v) == "false"
	case "number":
		return v[0] == '-' || v[0] >= '0' && v[0] <= '9'
	case "integer":
		return (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && !bytes.ContainsAny(v, ".eE")
	}
	return false
}

// schemaFunc builds a tool's input schema. A tool sets one as its InputSchema for
// addTool to build when first needed; the SDK is given the schema's JSON.
type schemaFunc func() *jsonschema.Schema

// schemaBuilder returns what builds the input schema given as a tool's InputSchema: a
// schemaFunc, a schema, or nil for the schema of In.
func schemaBuilder[In any](s any) schemaFunc {
	switch s := s.(type) {
	case nil:
		return func() *jsonschema.Schema { return mustSchema(reflect.TypeFor[In]()) }
	case schemaFunc:
		return s
	case *jsonschema.Schema:
		return func() *jsonschema.Schema { return s }
	}
	panic(fmt.Sprintf("input schema of type %T", s)) // a programmer mistake found at startup
}

// inputSchemaJSON returns the JSON of the named tool's input schema, which build makes:
// the copy generated into schemas_gen.go (by go test ./internal/tools -update, checked by
// TestGeneratedSchemas), else build's, encoded now. The generated copy spares every
// start building the schemas by reflection and encoding them, which was most of the
// time registering the tools took. Tests replace it to see every schema built.
var inputSchemaJSON = func(name string, build schemaFunc) json.RawMessage {
	if js, ok := generatedSchema(name); ok {
		return json.RawMessage(js)
	}
	return encodeSchema(name, build())
}

// generatedSchema returns the generated JSON of the named tool's input schema. The copies
// are a list the linker lays out, where a map would be built at every start.
func generatedSchema(name string) (string, bool) {
	for _, s := range generatedSchemas {
		if s.name == name {
			return s.json, true
		}
	}
	return "", false
}

func encodeSchema(name string, s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Errorf("tool %s: input schema: %w", name, err)) // a programmer mistake
	}
	return b
}

func mustSchema(t reflect.Type) *jsonschema.Schema {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Errorf("schema for %v: %w", t, err)) // a programmer mistake found at startup
	}
	return s
}
