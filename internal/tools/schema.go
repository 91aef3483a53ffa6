package tools

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// lineRange is a view_range: [start, end].
type lineRange []int

// schemaFor is the input schema of T, with view_range as an array of exactly two integers
// and the closed sets of values (output_mode, find's type, the editor's command) as enums.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		panic(err) // a bad argument struct: a programmer mistake found at startup
	}
	return s
}

// schemaOf is schemaFor[T], built when addTool needs it.
func schemaOf[T any]() schemaFunc { return schemaFor[T] }

// optionalSchemaOf is plainOptional(schemaFor[T]()), built when addTool needs it.
func optionalSchemaOf[T any]() schemaFunc {
	return func() *jsonschema.Schema { return plainOptional(schemaFor[T]()) }
}

// typeSchemas are the schemas of argument types that are not what their Go type says.
// Each call makes new ones, as a schema built from them may be changed.
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[lineRange]():          {Type: "array", Items: &jsonschema.Schema{Type: "integer"}, MinItems: jsonschema.Ptr(2), MaxItems: jsonschema.Ptr(2)},
		reflect.TypeFor[OutputMode]():         {Type: "string", Enum: outputModes},
		reflect.TypeFor[EntryKind]():          {Type: "string", Enum: entryKinds},
		reflect.TypeFor[editorCommand]():      {Type: "string", Enum: editorCommands},
		reflect.TypeFor[sandboxPermissions](): {Type: "string", Enum: sandboxValues},
	}
}

// plainOptional makes the optional pointer arguments of s plain optional values: a
// client (Claude Code among them) reads ["null", "boolean"] as a type it cannot fill.
func plainOptional(s *jsonschema.Schema) *jsonschema.Schema {
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	return s
}
