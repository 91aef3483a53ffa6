package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestQuickCheckAgreesWithValidation checks that the quick argument check never passes
// what the full validation refuses, and that it does pass the common calls.
func TestQuickCheckAgreesWithValidation(t *testing.T) {
	t.Parallel()
	schemas := map[string]*jsonschema.Schema{
		"bash":        mustSchema(reflect.TypeFor[BashArgs]()),
		"view":        schemaFor[ViewArgs](),
		"str_replace": schemaFor[StrReplaceArgs](),
		"task_list":   mustSchema(reflect.TypeFor[TaskListArgs]()),
	}
	payloads := []string{
		``, `{}`, `null`, `[]`, `"x"`, `5`,
		`{"command":"true"}`, `{"command":"ls","timeout":1000,"run_in_background":false,"description":"list"}`,
		`{"command":5}`, `{"command":null}`, `{"command":"x","timeout":1.5}`, `{"command":"x","timeout":1e3}`,
		`{"command":"x","timeout":"10"}`, `{"command":"x","timeout":-1}`, `{"command":"x","Command":"y"}`,
		`{"command":"x","extra":1}`, `{"timeout":10}`, `{"command":"x","run_in_background":"yes"}`,
		`{"command":["a"]}`, `{"command":{"a":1}}`, `{"command":"a","command":"b"}`,
		`{"path":"a.txt"}`, `{"path":"a.txt","view_range":[1,2]}`, `{"path":"a.txt","view_range":[1]}`,
		`{"path":"a","old_str":"x","new_str":"y"}`, `{"path":"a","old_str":"x"}`, `{"path":"a","old_str":"x","new_str":"y","replace_all":true}`,
	}
	for name, s := range schemas {
		resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			t.Fatal(err)
		}
		q := newQuickCheck(s)
		for _, p := range payloads {
			if !q.passes(json.RawMessage(p)) {
				continue
			}
			m := map[string]any{}
			if p != "" {
				if err := json.Unmarshal([]byte(p), &m); err != nil {
					t.Errorf("%s: quick check passed %s, which is not an object", name, p)
					continue
				}
			}
			if err := resolved.Validate(m); err != nil {
				t.Errorf("%s: quick check passed %s, which validation refuses: %v", name, p, err)
			}
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"bash", `{"command":"true"}`},
		{"bash", `{"command":"ls","timeout":1000,"run_in_background":false,"description":"list"}`},
		{"str_replace", `{"path":"a","old_str":"x","new_str":"y"}`},
		{"task_list", `{}`},
		{"task_list", ``},
	} {
		if !newQuickCheck(schemas[c.tool]).passes(json.RawMessage(c.args)) {
			t.Errorf("%s: quick check did not pass %s", c.tool, c.args)
		}
	}
}

// TestDecodeArgsIntegralNumbers: JSON Schema counts 1500.0 as an integer, and so does
// decoding, as a client that computes a timeout in floating point expects.
func TestDecodeArgsIntegralNumbers(t *testing.T) {
	t.Parallel()
	bashSchema := mustSchema(reflect.TypeFor[BashArgs]())
	resolved, err := bashSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"command":"x","timeout":1500.0}`, `{"command":"x","timeout":1.5e3}`} {
		in, err := decodeArgs[BashArgs](json.RawMessage(args), newQuickCheck(bashSchema), resolved)
		if err != nil || in.Timeout != 1500 {
			t.Errorf("decodeArgs(%s) = %+v, %v; want timeout 1500", args, in, err)
		}
	}
	if _, err := decodeArgs[BashArgs](json.RawMessage(`{"command":"x","timeout":1500.5}`), newQuickCheck(bashSchema), resolved); err == nil {
		t.Error("timeout 1500.5 was accepted")
	}
	viewSchema := schemaFor[ViewArgs]()
	vr, err := viewSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	in, err := decodeArgs[ViewArgs](json.RawMessage(`{"path":"a","view_range":[1.0,2e0]}`), newQuickCheck(viewSchema), vr)
	if err != nil || in.ViewRange == nil {
		t.Errorf("view_range [1.0, 2e0]: %+v, %v", in, err)
	}
}

// TestReportsNameRealArguments: the arguments a tool's row names for the live view and
// the audit log are arguments of that tool, so a renamed or mistyped one cannot silently
// show nothing or log only a length.
func TestReportsNameRealArguments(t *testing.T) {
	for _, e := range table {
		js, ok := generatedSchema(e.name)
		if !ok {
			t.Errorf("%s: no generated input schema", e.name)
			continue
		}
		var schema struct{ Properties map[string]json.RawMessage }
		if err := json.Unmarshal([]byte(js), &schema); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		names := e.report.logged
		if e.report.shows != "" {
			names = append([]string{e.report.shows}, names...)
		}
		for _, arg := range names {
			if _, ok := schema.Properties[arg]; !ok {
				t.Errorf("%s: the report names %q, which is not one of its arguments", e.name, arg)
			}
		}
	}
}
