package clitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Call is one step of a Model's script: the Boris tool it calls (by its own name; the
// model finds the name the client offers it under) and its arguments, or a function of
// the results so far that returns them.
type Call struct {
	Tool     string
	Args     map[string]any
	ArgsFrom func(results []string) map[string]any
}

// FinalText is a Model's last answer, once every call of its script has a result.
const FinalText = "All done."

// Model is a stand-in for a model API on 127.0.0.1 that answers each request with the
// next call of its script, and once every call has a result, with FinalText. It speaks
// OpenAI's chat/completions (streamed or not) and Responses (streamed) and Gemini's
// generateContent and streamGenerateContent, so that one script drives any client.
// A request that offers no Boris tool (a title, a summary, a check of who speaks next)
// is answered with plain text and does not advance the script.
type Model struct {
	t      *testing.T
	script []Call
	// Nulls makes the model send null for every optional parameter a call leaves
	// out, as a model under OpenAI's strict schemas does.
	Nulls bool

	mu      sync.Mutex
	results map[int]string
	raw     map[int]string            // each result as the API carried it
	offered []string                  // the tool names of the last request that offered any
	schemas map[string]map[string]any // the input schema of each offered tool
	// deferred is set when the client offers Boris's tools only through a tool
	// search (tool_search, then tool_call with the name and arguments), as Qwen Code
	// does; searched once the search named them.
	deferred, searched bool
	URL                string // the API's base URL, without a version
}

// NewModel starts a fake model API answering with script.
func NewModel(t *testing.T, script ...Call) *Model {
	m := &Model{t: t, script: script, results: map[int]string{}, raw: map[int]string{}, schemas: map[string]map[string]any{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// Result returns what the model read as the result of script step i.
func (m *Model) Result(i int) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[i]
	return r, ok
}

// Offered returns the tool names the last request with tools offered.
func (m *Model) Offered() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.offered)
}

// WantResult checks that the model read, as the result of step i, text containing every
// one of want.
func (m *Model) WantResult(t *testing.T, i int, want ...string) {
	t.Helper()
	r, ok := m.Result(i)
	if !ok {
		t.Errorf("step %d (%s): the model never received its result", i, m.script[i].Tool)
		return
	}
	for _, w := range want {
		if !strings.Contains(r, w) {
			t.Errorf("step %d (%s): the result does not contain %q:\n%s", i, m.script[i].Tool, w, r)
		}
	}
}

// toolName is the name the client offers Boris's tool under: one that names the server
// "boris" and ends in the tool's name after a separator, or else the tool's own name.
func (m *Model) toolName(tool string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Prefixed names first: a client may offer its own tool of the same name.
	for _, name := range m.offered {
		if strings.Contains(name, "boris") && (strings.HasSuffix(name, "_"+tool) || strings.HasSuffix(name, "-"+tool)) {
			return name
		}
	}
	if slices.Contains(m.offered, tool) {
		return tool
	}
	return ""
}

// searchID names the call of a client's tool search.
const searchID = "call_boris_search"

// next returns the next call to make: its id, the name to call it by and its arguments,
// or ok false when the script is done.
func (m *Model) next() (id, name string, args map[string]any, ok bool) {
	id, name, args, ok = m.nextStep()
	m.mu.Lock()
	deferred, searched := m.deferred, m.searched
	m.mu.Unlock()
	switch {
	case !ok || !deferred:
		return id, name, args, ok
	case !searched:
		var names []string
		for _, tool := range borisToolNames {
			names = append(names, "mcp__boris__"+tool)
		}
		return searchID, "tool_search", map[string]any{"query": "select:" + strings.Join(names, ",")}, true
	}
	return id, "tool_call", map[string]any{"name": name, "arguments": args}, true
}

// searchResult notes the Boris tools a tool search named.
func (m *Model) searchResult(raw json.RawMessage) {
	names := regexp.MustCompile(`mcp__boris__[a-z_]+`).FindAllString(TextOf(raw), -1)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.searched = true
	for _, name := range names {
		if !slices.Contains(m.offered, name) {
			m.offered = append(m.offered, name)
		}
	}
	slices.Sort(m.offered)
}

func (m *Model) nextStep() (id, name string, args map[string]any, ok bool) {
	m.mu.Lock()
	step := len(m.results)
	deferred, searched := m.deferred, m.searched
	m.mu.Unlock()
	if step >= len(m.script) {
		return "", "", nil, false
	}
	if deferred && !searched {
		return "", "", nil, true
	}
	c := m.script[step]
	name = m.toolName(c.Tool)
	if name == "" {
		m.t.Errorf("fake model: step %d calls %s, which the client does not offer (offered: %v)", step, c.Tool, m.Offered())
		return "", "", nil, false
	}
	args = c.Args
	if c.ArgsFrom != nil {
		m.mu.Lock()
		out := make([]string, step)
		for i := range out {
			out[i] = m.results[i]
		}
		m.mu.Unlock()
		args = c.ArgsFrom(out)
	}
	if m.Nulls {
		args = m.withNulls(name, args)
	}
	return callID(step), name, args, true
}

// withNulls adds null for every property of the tool's schema that args leave out.
func (m *Model) withNulls(name string, args map[string]any) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]any{}
	if props, ok := m.schemas[name]["properties"].(map[string]any); ok {
		for p := range props {
			out[p] = nil
		}
	}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// Raw returns the result of step i as the API carried it to the model: a string as it
// is, anything else as JSON.
func (m *Model) Raw(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.raw[i]
}

// WantReadable checks that the result of step i reached the model holding want as it is,
// with none of the MCP result's _meta.
func (m *Model) WantReadable(t *testing.T, i int, want string) {
	t.Helper()
	raw := m.Raw(i)
	if !strings.Contains(raw, want) || strings.Contains(raw, "_meta") {
		t.Errorf("step %d (%s): the model did not read %q as plain words:\n%s", i, m.script[i].Tool, want, raw)
	}
}

// record keeps the result of script step i, as the model read it.
func (m *Model) record(i int, raw json.RawMessage) {
	text := TextOf(raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen := m.results[i]; seen || i < 0 || i >= len(m.script) {
		return
	}
	m.results[i] = text
	var s string
	if json.Unmarshal(raw, &s) == nil {
		m.raw[i] = s
	} else {
		m.raw[i] = string(raw)
	}
	m.t.Logf("fake model: result of step %d (%s, %d characters)", i, m.script[i].Tool, len(text))
}

// borisToolNames are Boris's tools by their own names.
var borisToolNames = []string{"bash", "view", "str_replace", "create_file", "grep", "find", "task_input", "task_output", "task_kill", "task_list"}

// offer notes the tools of a request; it returns whether any is Boris's, or the client
// offers them through a tool search.
func (m *Model) offer(tools map[string]map[string]any) bool {
	boris := false
	for name := range tools {
		if strings.Contains(name, "boris") || slices.Contains(borisToolNames, name) {
			boris = true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !boris {
		_, search := tools["tool_search"]
		_, call := tools["tool_call"]
		if search && call {
			m.deferred = true
		}
		return search && call
	}
	m.offered = m.offered[:0]
	for name, schema := range tools {
		m.offered = append(m.offered, name)
		m.schemas[name] = schema
	}
	slices.Sort(m.offered)
	return true
}

// callID names script step i in a tool call, so that its result can be placed.
func callID(i int) string { return fmt.Sprintf("call_boris_%d", i) }

func stepOf(id string) int {
	var i int
	if _, err := fmt.Sscanf(id, "call_boris_%d", &i); err != nil {
		return -1
	}
	return i
}

func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"boris-e2e-model","object":"model","created":0,"owned_by":"boris"}]}`)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		m.chat(w, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		m.responses(w, body)
	case r.Method == http.MethodPost && strings.Contains(path, ":streamGenerateContent"):
		m.gemini(w, body, true)
	case r.Method == http.MethodPost && strings.Contains(path, ":generateContent"):
		m.gemini(w, body, false)
	case r.Method == http.MethodPost && strings.Contains(path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totalTokens":100}`)
	default:
		m.t.Logf("fake model: %s %s answered 404", r.Method, path)
		http.NotFound(w, r)
	}
}

// TextOf is what a model reads of a tool result: the text of a string, of a list of
// content parts, or of an object's string fields, with any string that is itself JSON
// read the same way (clients hand some results over as JSON).
func TextOf(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			parts = append(parts, v)
			var inner any
			if t := strings.TrimSpace(v); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &inner) == nil {
				walk(inner)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k != "type" { // a content part's kind, not its text
					walk(v[k])
				}
			}
		}
	}
	walk(v)
	return strings.Join(parts, "\n")
}

// chat answers OpenAI's chat/completions.
func (m *Model) chat(w http.ResponseWriter, body []byte) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		m.t.Errorf("fake model: undecodable chat request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tools := map[string]map[string]any{}
	for _, tl := range req.Tools {
		tools[tl.Function.Name] = tl.Function.Parameters
	}
	if !m.offer(tools) {
		chatAnswer(w, req.Stream, "", nil, "OK")
		return
	}
	for _, msg := range req.Messages {
		if msg.Role == "tool" && msg.ToolCallID == searchID {
			m.searchResult(msg.Content)
		} else if msg.Role == "tool" {
			m.record(stepOf(msg.ToolCallID), msg.Content)
		}
	}
	id, name, args, ok := m.next()
	if !ok {
		chatAnswer(w, req.Stream, "", nil, FinalText)
		return
	}
	chatAnswer(w, req.Stream, name, args, id)
}

// chatAnswer answers with a call of tool name (with args, as call id), or with text when
// name is empty.
func chatAnswer(w http.ResponseWriter, stream bool, name string, args map[string]any, idOrText string) {
	message := map[string]any{"role": "assistant", "content": idOrText}
	finish := "stop"
	if name != "" {
		a, _ := json.Marshal(args)
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": idOrText, "type": "function",
			"function": map[string]any{"name": name, "arguments": string(a)},
		}}}
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-boris", "object": "chat.completion", "created": 0, "model": "boris-e2e-model",
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{
			"id": "chatcmpl-boris", "object": "chat.completion.chunk", "created": 0, "model": "boris-e2e-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(message, nil, nil)
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// responses answers OpenAI's Responses API, streamed or not.
func (m *Model) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Stream bool              `json:"stream"`
		Input  []json.RawMessage `json:"input"`
		Tools  []struct {
			Type       string         `json:"type"`
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		m.t.Errorf("fake model: undecodable responses request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tools := map[string]map[string]any{}
	for _, tl := range req.Tools {
		tools[tl.Name] = tl.Parameters
	}
	if !m.offer(tools) {
		responsesAnswer(w, req.Stream, textItem("OK"))
		return
	}
	for _, raw := range req.Input {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) == nil && it.Type == "function_call_output" {
			m.record(stepOf(it.CallID), it.Output)
		}
	}
	id, name, args, ok := m.next()
	if !ok {
		responsesAnswer(w, req.Stream, textItem(FinalText))
		return
	}
	a, _ := json.Marshal(args)
	responsesAnswer(w, req.Stream, map[string]any{
		"type": "function_call", "id": "fc_" + id, "call_id": id,
		"name": name, "arguments": string(a), "status": "completed",
	})
}

func textItem(text string) map[string]any {
	return map[string]any{
		"type": "message", "id": "msg_boris", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
	}
}

func responsesAnswer(w http.ResponseWriter, stream bool, item map[string]any) {
	resp := map[string]any{
		"id": "resp_boris", "object": "response", "created_at": 0, "status": "completed", "model": "boris-e2e-model",
		"output": []any{item},
		"usage": map[string]any{
			"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		},
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	created := map[string]any{"id": "resp_boris", "object": "response", "created_at": 0, "status": "in_progress", "model": "boris-e2e-model", "output": []any{}}
	event(map[string]any{"type": "response.created", "response": created})
	event(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.completed", "response": resp})
}

// gemini answers Gemini's generateContent and streamGenerateContent (as server-sent
// events when alt=sse, the way the Gemini CLI asks).
func (m *Model) gemini(w http.ResponseWriter, body []byte, stream bool) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string         `json:"name"`
				Parameters           map[string]any `json:"parameters"`
				ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		m.t.Errorf("fake model: undecodable gemini request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tools := map[string]map[string]any{}
	for _, tl := range req.Tools {
		for _, fd := range tl.FunctionDeclarations {
			tools[fd.Name] = fd.Parameters
			if fd.ParametersJSONSchema != nil {
				tools[fd.Name] = fd.ParametersJSONSchema
			}
		}
	}
	if !m.offer(tools) {
		text := "OK"
		if req.GenerationConfig.ResponseMimeType == "application/json" {
			text = `{"reasoning":"The task is done.","next_speaker":"user"}`
		}
		geminiAnswer(w, stream, map[string]any{"text": text})
		return
	}
	n := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			step := stepOf(p.FunctionResponse.ID)
			if step < 0 {
				step = n
			}
			m.record(step, p.FunctionResponse.Response)
			n++
		}
	}
	id, name, args, ok := m.next()
	if !ok {
		geminiAnswer(w, stream, map[string]any{"text": FinalText})
		return
	}
	geminiAnswer(w, stream, map[string]any{"functionCall": map[string]any{"id": id, "name": name, "args": args}})
}

func geminiAnswer(w http.ResponseWriter, stream bool, part map[string]any) {
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-2.5-pro",
	}
	b, _ := json.Marshal(resp)
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
