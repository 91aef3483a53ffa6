package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
)

// refused is what every refusal of a tool's arguments by its input schema ends with.
const refused = "check the parameter names and types in the"

// faceConfigs are the configurations that offer each face's tools.
func faceConfigs(t *testing.T) map[string]config.Config {
	t.Helper()
	boris, editor, claude, codex := testConfig(t), testConfig(t), testConfig(t), testConfig(t)
	editor.AnthropicCompat = true
	claude.Tools = "claude-code"
	codex.Tools = "codex"
	return map[string]config.Config{"boris": boris, "editor": editor, "claude-code": claude, "codex": codex}
}

// TestNullIsNotGiven: every tool of every face takes a null for each of its optional
// parameters as that parameter not given, as opencode sends them for a model under
// OpenAI's strict schemas, instead of refusing the call.
func TestNullIsNotGiven(t *testing.T) {
	t.Parallel()
	for face, cfg := range faceConfigs(t) {
		t.Run(face, func(t *testing.T) {
			t.Parallel()
			cs, _ := connect(t, cfg, nil)
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				var s struct {
					Properties map[string]struct {
						Type any   `json:"type"`
						Enum []any `json:"enum"`
					} `json:"properties"`
					Required []string `json:"required"`
				}
				b, _ := json.Marshal(tool.InputSchema)
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				args := map[string]any{}
				optional := 0
				for name, p := range s.Properties {
					args[name] = nil
					if !contains(s.Required, name) {
						optional++
						continue
					}
					switch {
					case len(p.Enum) > 0:
						args[name] = p.Enum[0]
					case p.Type == "string":
						args[name] = "missing.txt"
					case p.Type == "integer" || p.Type == "number":
						args[name] = 1
					case p.Type == "boolean":
						args[name] = false
					default:
						args[name] = []any{}
					}
				}
				if optional == 0 {
					continue
				}
				res := call(t, cs, tool.Name, args)
				if got := textOf(res); res.IsError && strings.Contains(got, refused) {
					t.Errorf("%s with every optional parameter null: refused: %s", tool.Name, got)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestArgumentErrorsInPlainWords: a refused argument is named, with the type it must have
// in plain words and what was sent, never in the validator's Go terms.
func TestArgumentErrorsInPlainWords(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	for _, c := range []struct {
		tool string
		args string
		want string
	}{
		{"bash", `{"command":null}`, `missing required parameter "command" (a string)`},
		{"bash", `{"command":"true","timeout":"abc"}`, `parameter "timeout" must be an integer (a whole number), got the string "abc"`},
		{"bash", `{"command":"true","timeout":1.5}`, `parameter "timeout" must be an integer (a whole number), got the number 1.5`},
		{"bash", `{"command":"true","tty":"yes"}`, `parameter "tty" must be a boolean (true or false), got the string "yes"`},
		{"bash", `{"command":"true","cmd":"x"}`, `unknown parameter "cmd": this tool's parameters are command, description, run_in_background, timeout, tty`},
		{"view", `{"path":"a","view_range":[1]}`, `parameter "view_range" must be an array of 2 integers, got 1 item`},
		{"view", `{"path":"a","view_range":[1,"x"]}`, `parameter "view_range" item 2 must be an integer (a whole number), got the string "x"`},
		{"grep", `{"pattern":"a","output_mode":"lines"}`, `parameter "output_mode" must be one of files_with_matches, content, count, got the string "lines"`},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		want := "INVALID_ARGUMENT: " + c.want + "; " + refused + " " + c.tool + " tool's input schema"
		if got := textOf(res); !res.IsError || got != want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.tool, c.args, got, want)
		}
		// What the protocol asks (serverInfo, on 2026-07-28) may be there; nothing of Boris's.
		if _, ok := res.Meta["code"]; ok {
			t.Errorf("%s %s: error result with _meta %v, want no code in it", c.tool, c.args, res.Meta)
		}
	}
}
