package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
)

type sameArgs struct {
	Name  string `json:"name" jsonschema:"A name."`
	Count int    `json:"count,omitempty" jsonschema:"A count."`
	Flag  *bool  `json:"flag,omitempty"`
}

type sameOut struct {
	Greeting string `json:"greeting,omitempty"`
	Count    int    `json:"count,omitempty"`
}

// sameHandler answers with a structured result, a text result of its own, nothing, or an
// error, depending on the name.
func sameHandler(_ context.Context, _ *mcp.CallToolRequest, in sameArgs) (*mcp.CallToolResult, *sameOut, error) {
	switch in.Name {
	case "fail":
		return nil, nil, errors.New("it went wrong")
	case "nothing":
		return nil, nil, nil
	case "text":
		return text("hello as text\n"), &sameOut{Greeting: "hi"}, nil
	}
	return nil, &sameOut{Greeting: "hello " + in.Name, Count: in.Count}, nil
}

// sortedText returns res with JSON text content re-encoded with sorted keys: the SDK
// re-encodes its structured result through a map, addTool keeps the struct's order.
func sortedText(res *mcp.CallToolResult) *mcp.CallToolResult {
	r := *res
	r.Content = nil
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			var v any
			if json.Unmarshal([]byte(tc.Text), &v) == nil {
				b, _ := json.Marshal(v)
				c = &mcp.TextContent{Text: string(b)}
			}
		}
		r.Content = append(r.Content, c)
	}
	return &r
}

// TestAddToolMatchesSDK calls one handler registered with addTool and with mcp.AddTool,
// and checks that the results agree: the same result for valid input (with structured
// output on; off, addTool leaves the structured form out on purpose), and for invalid
// input and handler errors the SDK's message, which addTool starts with a code and
// follows, for invalid input, with a hint. Unlike the SDK's, addTool's output schema also
// has the fields of an error's structured form, which every error carries.
func TestAddToolMatchesSDK(t *testing.T) {
	t.Parallel()
	tool := &mcp.Tool{Name: "same", Description: "A tool registered both ways."}
	impl := &mcp.Implementation{Name: "same", Version: "1"}
	ours := mcp.NewServer(impl, nil)
	addTool(ours, &handlers{Deps: Deps{Config: &config.Config{StructuredOutput: true}}}, tool, sameHandler)
	sdk := mcp.NewServer(impl, nil)
	mcp.AddTool(sdk, tool, sameHandler)
	oc, sc := clientOf(t, ours), clientOf(t, sdk)

	ol, err := oc.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := sc.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props, _ := ol.Tools[0].OutputSchema.(map[string]any)["properties"].(map[string]any)
	if props["error"] == nil || props["code"] == nil {
		t.Errorf("output schema properties %v: want error and code among them", props)
	}
	delete(props, "error")
	delete(props, "code")
	if d := cmp.Diff(jsonOf(t, sl.Tools), jsonOf(t, ol.Tools)); d != "" {
		t.Errorf("tools/list differs from the SDK's (-sdk +ours):\n%s", d)
	}

	for _, args := range []string{
		`{"name":"world"}`, `{"name":"world","count":3,"flag":true}`, `{"name":"x","count":1500.0}`,
		`{"name":"nothing"}`, `{"name":"text"}`,
	} {
		o, s := callRaw(t, oc, args), callRaw(t, sc, args)
		if d := cmp.Diff(jsonOf(t, sortedText(s)), jsonOf(t, sortedText(o))); d != "" {
			t.Errorf("%s: result differs from the SDK's (-sdk +ours):\n%s", args, d)
		}
	}
	// Invalid input: the SDK refuses it too, and addTool words it in plain words.
	for _, c := range []struct{ args, want string }{
		{`{}`, `missing required parameter "name" (a string)`},
		{`{"name":5}`, `parameter "name" must be a string, got the number 5`},
		{`{"name":"x","count":"3"}`, `parameter "count" must be an integer (a whole number), got the string "3"`},
		{`{"name":"x","extra":1}`, `unknown parameter "extra": this tool's parameters are name, count, flag`},
		{`{"name":"x","count":1.5}`, `parameter "count" must be an integer (a whole number), got the number 1.5`},
	} {
		o, s := callRaw(t, oc, c.args), callRaw(t, sc, c.args)
		want := "INVALID_ARGUMENT: " + c.want + "; check the parameter names and types in the same tool's input schema"
		if !o.IsError || !s.IsError || resultText(o) != want {
			t.Errorf("%s: got error %v %q, want error %q (the SDK's: %v %q)", c.args, o.IsError, resultText(o), want, s.IsError, resultText(s))
		}
		if got, want := jsonOf(t, o.StructuredContent), jsonOf(t, map[string]any{"code": "INVALID_ARGUMENT", "error": strings.TrimPrefix(want, "INVALID_ARGUMENT: ")}); got != want {
			t.Errorf("%s: structured %s, want %s", c.args, got, want)
		}
	}
	// A null is a parameter not given: ours answers as the SDK does without it.
	if o, s := callRaw(t, oc, `{"name":"world","count":null,"flag":null}`), callRaw(t, sc, `{"name":"world"}`); jsonOf(t, sortedText(o)) != jsonOf(t, sortedText(s)) {
		t.Errorf("nulls: got %s, want %s", jsonOf(t, o), jsonOf(t, s))
	}
	o, s := callRaw(t, oc, `{"name":"fail"}`), callRaw(t, sc, `{"name":"fail"}`)
	if !o.IsError || !s.IsError || resultText(o) != "FAILED: "+resultText(s) || o.Meta["code"] != "FAILED" {
		t.Errorf("handler error: got %v %q %v, want FAILED: and the SDK's %v %q", o.IsError, resultText(o), o.Meta, s.IsError, resultText(s))
	}
	if got, want := jsonOf(t, o.StructuredContent), jsonOf(t, map[string]any{"code": "FAILED", "error": resultText(s)}); got != want {
		t.Errorf("handler error: structured %s, want %s", got, want)
	}
}

func clientOf(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return testutil.Connect(t, s, nil)
}

func callRaw(t *testing.T, cs *mcp.ClientSession, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "same", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return res
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func resultText(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
