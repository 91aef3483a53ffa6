package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// withoutNulls returns args without the properties whose value is null, at any depth: a
// null stands for a parameter not given. Clients that pass a model's arguments verbatim
// (opencode) send one for every optional parameter a model under OpenAI's strict schemas
// leaves unused. Arguments that are not a JSON object are returned as they are, for the
// validation to refuse.
func withoutNulls(args json.RawMessage) json.RawMessage {
	if !bytes.Contains(args, []byte("null")) {
		return args
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return args
	}
	if _, ok := v.(map[string]any); !ok {
		return args
	}
	var drop func(any) any
	drop = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if e == nil {
					delete(v, k)
				} else {
					v[k] = drop(e)
				}
			}
		case []any:
			for i, e := range v {
				v[i] = drop(e)
			}
		}
		return v
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(drop(v)) != nil {
		return args
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// argsError words what is wrong with arguments m, which schema s refused with err: the
// parameter and what it must be, in plain words. What it cannot word itself it takes
// from err, without the validator's internals.
func argsError(s *jsonschema.Schema, m map[string]any, err error) error {
	if s != nil && s.Type == "object" {
		var unknown []string
		for name := range m {
			if _, ok := s.Properties[name]; !ok {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return fmt.Errorf("unknown %s %s: this tool's parameters are %s", pluralWord(len(unknown), "parameter"), quotedList(unknown), paramList(s))
		}
		for _, name := range s.Required {
			if _, ok := m[name]; !ok {
				return fmt.Errorf("missing required parameter %q (%s)", name, typeWords(s.Properties[name]))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if why := valueError(s.Properties[name], m[name]); why != "" {
				return fmt.Errorf("parameter %q %s", name, why)
			}
		}
	}
	msg := strings.ReplaceAll(err.Error(), "<invalid reflect.Value>", "null")
	msg = strings.TrimPrefix(msg, "validating root: ")
	return fmt.Errorf("invalid arguments: %s", msg)
}

// valueError says why v does not fit p ("must be an integer, got the string \"3\""), or
// "" when it finds nothing wrong.
func valueError(p *jsonschema.Schema, v any) string {
	if p == nil {
		return ""
	}
	if !fitsType(p, v) {
		return fmt.Sprintf("must be %s, got %s", typeWords(p), valueWords(v))
	}
	if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e any) bool { return e == v }) {
		return fmt.Sprintf("must be one of %s, got %s", enumWords(p.Enum), valueWords(v))
	}
	if a, ok := v.([]any); ok {
		if p.MinItems != nil && len(a) < *p.MinItems || p.MaxItems != nil && len(a) > *p.MaxItems {
			return fmt.Sprintf("must be %s, got %d %s", typeWords(p), len(a), pluralWord(len(a), "item"))
		}
		for i, e := range a {
			if why := valueError(p.Items, e); why != "" {
				return fmt.Sprintf("item %d %s", i+1, why)
			}
		}
	}
	if o, ok := v.(map[string]any); ok && p.Type == "object" {
		for _, name := range p.Required {
			if _, ok := o[name]; !ok {
				return fmt.Sprintf("lacks its required field %q", name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(o)) {
			q, ok := p.Properties[name]
			if !ok {
				return fmt.Sprintf("has an unknown field %q", name)
			}
			if why := valueError(q, o[name]); why != "" {
				return fmt.Sprintf("field %q %s", name, why)
			}
		}
	}
	return ""
}

// fitsType reports whether v is of a type p allows.
func fitsType(p *jsonschema.Schema, v any) bool {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if len(types) == 0 {
		return true
	}
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case float64:
			if t == "number" || t == "integer" && x == math.Trunc(x) {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		}
	}
	return false
}

// typeWords names what p accepts: "an integer", "a string: one of a, b", "an array of 2
// integers".
func typeWords(p *jsonschema.Schema) string {
	if p == nil {
		return "a value"
	}
	t := p.Type
	if t == "" {
		for _, x := range p.Types {
			if x != "null" {
				t = x
			}
		}
	}
	switch t {
	case "string":
		if len(p.Enum) > 0 {
			return "a string: one of " + enumWords(p.Enum)
		}
		return "a string"
	case "integer":
		return "an integer (a whole number)"
	case "number":
		return "a number"
	case "boolean":
		return "a boolean (true or false)"
	case "object":
		return "an object"
	case "array":
		items := "values"
		if p.Items != nil {
			items = strings.TrimPrefix(strings.TrimPrefix(typeWords(p.Items), "an "), "a ") + "s"
			items, _, _ = strings.Cut(items, " (")
			if !strings.HasSuffix(items, "s") {
				items += "s"
			}
		}
		switch {
		case p.MinItems != nil && p.MaxItems != nil && *p.MinItems == *p.MaxItems:
			return fmt.Sprintf("an array of %d %s", *p.MinItems, items)
		}
		return "an array of " + items
	}
	return "a value"
}

// valueWords describes a JSON value as the model sent it.
func valueWords(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return fmt.Sprintf("an array of %d %s", len(x), pluralWord(len(x), "item"))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

func enumWords(enum []any) string {
	var s []string
	for _, e := range enum {
		s = append(s, fmt.Sprint(e))
	}
	return strings.Join(s, ", ")
}

// paramList lists a schema's parameters, the required ones first.
func paramList(s *jsonschema.Schema) string {
	var names []string
	names = append(names, s.Required...)
	for _, n := range slices.Sorted(maps.Keys(s.Properties)) {
		if !slices.Contains(s.Required, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

func quotedList(names []string) string {
	var q []string
	for _, n := range names {
		q = append(q, fmt.Sprintf("%q", n))
	}
	return strings.Join(q, ", ")
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
