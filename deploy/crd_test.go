package deploy

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// The agent-sandbox manifests are checked against the CRD schemas that project publishes
// (its k8s/crds directory, named by AGENT_SANDBOX_CRDS), the way the API server checks an
// object it is given: a field the schema does not declare is an error here (the server
// would silently drop it), as are a missing required field, a wrong type, a value outside
// an enum, a pattern, a bound or a format. The CRDs are read, not copied into this
// repository; without AGENT_SANDBOX_CRDS the test is skipped and says so.

// crdSchema is the part of an OpenAPI v3 schema that a CRD's structural schema uses.
type crdSchema struct {
	Type                 string                `json:"type"`
	Format               string                `json:"format"`
	Properties           map[string]*crdSchema `json:"properties"`
	Required             []string              `json:"required"`
	Items                *crdSchema            `json:"items"`
	AdditionalProperties json.RawMessage       `json:"additionalProperties"`
	Enum                 []any                 `json:"enum"`
	Pattern              string                `json:"pattern"`
	MinLength            *int                  `json:"minLength"`
	MaxLength            *int                  `json:"maxLength"`
	Minimum              *float64              `json:"minimum"`
	Maximum              *float64              `json:"maximum"`
	MinItems             *int                  `json:"minItems"`
	MaxItems             *int                  `json:"maxItems"`
	MinProperties        *int                  `json:"minProperties"`
	MaxProperties        *int                  `json:"maxProperties"`
	AnyOf                []*crdSchema          `json:"anyOf"`
	AllOf                []*crdSchema          `json:"allOf"`
	OneOf                []*crdSchema          `json:"oneOf"`
	Nullable             bool                  `json:"nullable"`
	IntOrString          bool                  `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool                  `json:"x-kubernetes-preserve-unknown-fields"`
	EmbeddedResource     bool                  `json:"x-kubernetes-embedded-resource"`
	ListType             string                `json:"x-kubernetes-list-type"`
	ListMapKeys          []string              `json:"x-kubernetes-list-map-keys"`
	Validations          []struct {
		Rule string `json:"rule"`
	} `json:"x-kubernetes-validations"`
}

type crd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema *crdSchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// loadCRDs reads the CRDs in dir into their served schemas by apiVersion/kind.
func loadCRDs(t *testing.T, dir string) map[string]*crdSchema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("AGENT_SANDBOX_CRDS=%s holds no CRD files: %v", dir, err)
	}
	out := map[string]*crdSchema{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var c crd
		if err := json.Unmarshal(js, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range c.Spec.Versions {
			if v.Served && v.Schema.OpenAPIV3Schema != nil {
				out[c.Spec.Group+"/"+v.Name+"/"+c.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
			}
		}
	}
	return out
}

// validator checks one document, collecting every error and the CEL rules it met, which
// it cannot evaluate.
type validator struct {
	errs []string
	cel  int
}

func (v *validator) errorf(path, format string, args ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, args...))
}

// quietly reports whether value matches s without recording errors.
func (v *validator) quietly(s *crdSchema, value any) bool {
	w := &validator{}
	w.check(s, "", value, false)
	return len(w.errs) == 0
}

func (v *validator) check(s *crdSchema, path string, value any, root bool) {
	if value == nil {
		if !s.Nullable {
			v.errorf(path, "null where the schema has no nullable")
		}
		return
	}
	v.cel += len(s.Validations)
	for _, sub := range s.AllOf {
		v.check(sub, path, value, false)
	}
	if len(s.AnyOf) > 0 && !slices.ContainsFunc(s.AnyOf, func(sub *crdSchema) bool { return v.quietly(sub, value) }) {
		v.errorf(path, "matches none of anyOf")
	}
	if len(s.OneOf) > 0 {
		n := 0
		for _, sub := range s.OneOf {
			if v.quietly(sub, value) {
				n++
			}
		}
		if n != 1 {
			v.errorf(path, "matches %d of oneOf, want 1", n)
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(value) }) {
		v.errorf(path, "%v is not one of %v", value, s.Enum)
	}
	if s.IntOrString {
		switch x := value.(type) {
		case string:
			v.checkString(s, path, x)
		case float64:
			if x != math.Trunc(x) {
				v.errorf(path, "%v is neither an integer nor a string", x)
			}
		default:
			v.errorf(path, "%T is neither an integer nor a string", value)
		}
		return
	}
	switch s.Type {
	case "object":
		m, ok := value.(map[string]any)
		if !ok {
			v.errorf(path, "want an object, got %T", value)
			return
		}
		v.checkObject(s, path, m, root)
	case "array":
		a, ok := value.([]any)
		if !ok {
			v.errorf(path, "want an array, got %T", value)
			return
		}
		if s.MinItems != nil && len(a) < *s.MinItems || s.MaxItems != nil && len(a) > *s.MaxItems {
			v.errorf(path, "%d items, outside [%v, %v]", len(a), s.MinItems, s.MaxItems)
		}
		for i, item := range a {
			if s.Items != nil {
				v.check(s.Items, fmt.Sprintf("%s[%d]", path, i), item, false)
			}
		}
		if s.ListType == "set" || s.ListType == "map" {
			seen := map[string]bool{}
			for _, item := range a {
				key := fmt.Sprint(item)
				if s.ListType == "map" {
					if m, ok := item.(map[string]any); ok {
						var parts []string
						for _, k := range s.ListMapKeys {
							parts = append(parts, fmt.Sprint(m[k]))
						}
						key = strings.Join(parts, "/")
					}
				}
				if seen[key] {
					v.errorf(path, "duplicate item %s in a list of type %s", key, s.ListType)
				}
				seen[key] = true
			}
		}
	case "string":
		x, ok := value.(string)
		if !ok {
			v.errorf(path, "want a string, got %T (%v)", value, value)
			return
		}
		v.checkString(s, path, x)
	case "integer":
		x, ok := value.(float64)
		if !ok || x != math.Trunc(x) {
			v.errorf(path, "want an integer, got %T (%v)", value, value)
			return
		}
		if s.Format == "int32" && (x < math.MinInt32 || x > math.MaxInt32) {
			v.errorf(path, "%v does not fit int32", x)
		}
		v.checkNumber(s, path, x)
	case "number":
		x, ok := value.(float64)
		if !ok {
			v.errorf(path, "want a number, got %T", value)
			return
		}
		v.checkNumber(s, path, x)
	case "boolean":
		if _, ok := value.(bool); !ok {
			v.errorf(path, "want a boolean, got %T (%v)", value, value)
		}
	case "":
		if !s.PreserveUnknown && len(s.AnyOf) == 0 && len(s.AllOf) == 0 && len(s.OneOf) == 0 {
			v.errorf(path, "the schema gives no type")
		}
	default:
		v.errorf(path, "unknown schema type %q", s.Type)
	}
}

func (v *validator) checkObject(s *crdSchema, path string, m map[string]any, root bool) {
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			v.errorf(path, "required field %q is missing", r)
		}
	}
	if s.MinProperties != nil && len(m) < *s.MinProperties || s.MaxProperties != nil && len(m) > *s.MaxProperties {
		v.errorf(path, "%d fields, outside [%v, %v]", len(m), s.MinProperties, s.MaxProperties)
	}
	var additional *crdSchema
	allowAny := s.PreserveUnknown
	if len(s.AdditionalProperties) > 0 {
		if string(s.AdditionalProperties) == "true" {
			allowAny = true
		} else if string(s.AdditionalProperties) != "false" {
			additional = new(crdSchema)
			if err := json.Unmarshal(s.AdditionalProperties, additional); err != nil {
				v.errorf(path, "additionalProperties: %v", err)
				return
			}
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub := path + "." + k
		switch {
		case (root || s.EmbeddedResource) && (k == "apiVersion" || k == "kind"):
			if _, ok := m[k].(string); !ok {
				v.errorf(sub, "want a string")
			}
		case (root || s.EmbeddedResource) && k == "metadata":
			// ObjectMeta: the API server checks it itself; the strict decode in
			// manifests_test.go checks its fields.
			if _, ok := m[k].(map[string]any); !ok {
				v.errorf(sub, "want an object")
			}
		case s.Properties[k] != nil:
			v.check(s.Properties[k], sub, m[k], false)
		case additional != nil:
			v.check(additional, sub, m[k], false)
		case allowAny:
		default:
			v.errorf(sub, "unknown field: the schema does not declare it, and the API server would drop it")
		}
	}
}

var patterns = map[string]*regexp.Regexp{}

func (v *validator) checkString(s *crdSchema, path, x string) {
	n := utf8.RuneCountInString(x)
	if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength {
		v.errorf(path, "%q has %d characters, outside [%v, %v]", x, n, s.MinLength, s.MaxLength)
	}
	if s.Pattern != "" {
		re, ok := patterns[s.Pattern]
		if !ok {
			var err error
			if re, err = regexp.Compile(s.Pattern); err != nil {
				v.errorf(path, "pattern %q: %v", s.Pattern, err)
				return
			}
			patterns[s.Pattern] = re
		}
		if !re.MatchString(x) {
			v.errorf(path, "%q does not match %s", x, s.Pattern)
		}
	}
	if s.Format == "date-time" {
		if _, err := time.Parse(time.RFC3339, x); err != nil {
			v.errorf(path, "%q is not a date-time", x)
		}
	}
}

func (v *validator) checkNumber(s *crdSchema, path string, x float64) {
	if s.Minimum != nil && x < *s.Minimum || s.Maximum != nil && x > *s.Maximum {
		v.errorf(path, "%v outside [%v, %v]", x, s.Minimum, s.Maximum)
	}
}

// agentSandboxDocs returns the agent-sandbox documents of the manifests, as JSON values,
// with where each comes from.
func agentSandboxDocs(t *testing.T) (docs []map[string]any, names []string) {
	t.Helper()
	for _, d := range yamlDocs(t) {
		var m map[string]any
		if err := json.Unmarshal(d.json, &m); err != nil {
			t.Fatal(err)
		}
		if av, _ := m["apiVersion"].(string); strings.Contains(av, "agents.x-k8s.io/") {
			docs = append(docs, m)
			names = append(names, fmt.Sprintf("%s document %d (%s)", d.file, d.n, m["kind"]))
		}
	}
	return docs, names
}

// TestAgentSandboxAgainstCRDs checks every agent-sandbox document against the schema of
// the CRD version it names.
func TestAgentSandboxAgainstCRDs(t *testing.T) {
	dir := os.Getenv("AGENT_SANDBOX_CRDS")
	if dir == "" {
		t.Skip("AGENT_SANDBOX_CRDS is not set: point it at agent-sandbox's k8s/crds directory (see docs/fleet.md) to check the manifests against its CRD schemas")
	}
	schemas := loadCRDs(t, dir)
	docs, names := agentSandboxDocs(t)
	if len(docs) == 0 {
		t.Fatal("no agent-sandbox documents in the manifests")
	}
	kinds := map[string]bool{}
	for i, doc := range docs {
		key := fmt.Sprintf("%s/%s", doc["apiVersion"], doc["kind"])
		s := schemas[key]
		if s == nil {
			t.Errorf("%s: %s is not served by these CRDs", names[i], key)
			continue
		}
		kinds[fmt.Sprint(doc["kind"])] = true
		v := &validator{}
		v.check(s, "", doc, true)
		for _, e := range v.errs {
			t.Errorf("%s: %s", names[i], e)
		}
		if v.cel > 0 {
			t.Logf("%s: %d CEL rules (x-kubernetes-validations) not evaluated", names[i], v.cel)
		}
	}
	for _, k := range []string{"Sandbox", "SandboxTemplate", "SandboxWarmPool", "SandboxClaim"} {
		if !kinds[k] {
			t.Errorf("no %s was checked", k)
		}
	}
}

// TestCRDValidatorRefuses: the validator finds what the API server would refuse or drop,
// so that a manifest that passes it is not merely unchecked.
func TestCRDValidatorRefuses(t *testing.T) {
	schema := &crdSchema{Type: "object", Required: []string{"spec"}, Properties: map[string]*crdSchema{
		"spec": {Type: "object", Required: []string{"warmPoolRef"}, Properties: map[string]*crdSchema{
			"warmPoolRef": {Type: "object", Properties: map[string]*crdSchema{"name": {Type: "string"}}},
			"replicas":    {Type: "integer", Format: "int32", Minimum: ptr(0.0)},
			"mode":        {Type: "string", Enum: []any{"Running", "Suspended"}},
			"cpu":         {IntOrString: true, AnyOf: []*crdSchema{{Type: "integer"}, {Type: "string"}}, Pattern: `^[0-9]+m?$`},
			"labels":      {Type: "object", AdditionalProperties: json.RawMessage(`{"type":"string"}`)},
		}},
	}}
	for _, c := range []struct {
		doc  string
		want string
	}{
		{`{"apiVersion":"x/v1","kind":"K","metadata":{},"spec":{"warmPoolRef":{"name":"p"},"replicas":2,"mode":"Running","cpu":"500m","labels":{"a":"b"}}}`, ""},
		{`{"spec":{"warmpool":"p"}}`, "unknown field"},
		{`{"spec":{}}`, `required field "warmPoolRef"`},
		{`{"spec":{"warmPoolRef":{"name":"p"},"replicas":-1}}`, "outside"},
		{`{"spec":{"warmPoolRef":{"name":"p"},"replicas":"2"}}`, "want an integer"},
		{`{"spec":{"warmPoolRef":{"name":"p"},"mode":"Paused"}}`, "not one of"},
		{`{"spec":{"warmPoolRef":{"name":"p"},"cpu":"half"}}`, "does not match"},
		{`{"spec":{"warmPoolRef":{"name":"p"},"labels":{"a":1}}}`, "want a string"},
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		v := &validator{}
		v.check(schema, "", doc, true)
		got := strings.Join(v.errs, "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: errors %q, want %q", c.doc, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
