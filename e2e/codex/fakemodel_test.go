package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// toolCall is one step of a fakeModel's script: the tool of the MCP server
// "boris" it calls, and its arguments, or a function of the results so far
// that returns them (for a session ID a result named).
type toolCall struct {
	Name     string
	Args     map[string]any
	ArgsFrom func(results []string) map[string]any
}

// fakeModel is a stand-in for the OpenAI Responses API (POST /v1/responses,
// streamed). Each request that ends with the output of its last call is
// answered with the next call of the script, as a function_call in the
// namespace mcp__boris; once every call has its output, with a final text.
// Every output it receives is recorded by the index of the call it answers,
// as the model reads it.
type fakeModel struct {
	t      *testing.T
	script []toolCall
	// codeMode calls each tool from JavaScript run by Codex's exec tool, as
	// Codex has its current default model do, and hands the model the
	// tool's result as the script prints it with text().
	codeMode bool

	mu      sync.Mutex
	results map[int]string
	offered []string // the mcp__boris tools of the last request
}

// codeModeCall is the JavaScript that calls a tool (name, arguments) in code
// mode and prints its text blocks.
const codeModeCall = `const r = await tools.mcp__boris__%s(%s);
if (typeof r === "string") {
  text(r);
} else {
  for (const c of r.content ?? []) text(c.type === "text" ? c.text : "[" + c.type + "]");
}`

// finalText is the fake model's last answer, once every call has an output.
const finalText = "All done."

func newFakeModel(t *testing.T, script ...toolCall) (*fakeModel, string) {
	m := &fakeModel{t: t, script: script, results: map[int]string{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL + "/v1"
}

// result returns the output recorded for script step i.
func (m *fakeModel) result(i int) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[i]
	return r, ok
}

// tools returns the tools the last request offered in the namespace mcp__boris.
func (m *fakeModel) tools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.offered)
}

type responsesRequest struct {
	Model string            `json:"model"`
	Input []json.RawMessage `json:"input"`
	Tools []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"tools"`
}

// inputItem is the part of an input item the fake model reads.
type inputItem struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Output json.RawMessage `json:"output"`
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		m.t.Logf("fake model: %s %s answered 404", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		m.t.Errorf("fake model: undecodable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.noteTools(req)
	done := m.record(req)
	if done < len(m.script) {
		step := m.script[done]
		if !m.codeMode && !slices.Contains(m.tools(), step.Name) {
			m.t.Errorf("fake model: step %d calls %s, which Codex does not offer in mcp__boris (offered: %v)", done, step.Name, m.tools())
			stream(w, message("The tool is missing."))
			return
		}
		args := step.Args
		if step.ArgsFrom != nil {
			args = step.ArgsFrom(m.outputs(done))
		}
		a, _ := json.Marshal(args)
		if m.codeMode {
			stream(w, map[string]any{
				"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%d", done), "call_id": fmt.Sprintf("call_boris_%d", done),
				"name": "exec", "input": fmt.Sprintf(codeModeCall, step.Name, a), "status": "completed",
			})
			return
		}
		stream(w, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_%d", done), "call_id": fmt.Sprintf("call_boris_%d", done),
			"namespace": "mcp__boris", "name": step.Name, "arguments": string(a), "status": "completed",
		})
		return
	}
	stream(w, message(finalText))
}

func (m *fakeModel) noteTools(req responsesRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offered = nil
	for _, tool := range req.Tools {
		if tool.Type == "namespace" && tool.Name == "mcp__boris" {
			for _, nt := range tool.Tools {
				m.offered = append(m.offered, nt.Name)
			}
		}
	}
}

// record keeps the output of every scripted call in the request, and returns
// how many there are: the next step of the script.
func (m *fakeModel) record(req responsesRequest) int {
	done := 0
	for _, raw := range req.Input {
		var it inputItem
		if json.Unmarshal(raw, &it) != nil || it.Type != "function_call_output" && it.Type != "custom_tool_call_output" {
			continue
		}
		var step int
		if _, err := fmt.Sscanf(it.CallID, "call_boris_%d", &step); err != nil {
			continue
		}
		m.mu.Lock()
		if _, seen := m.results[step]; !seen {
			m.results[step] = outputText(it.Output)
			m.t.Logf("fake model: output of step %d (%d characters)", step, len(m.results[step]))
		}
		m.mu.Unlock()
		done++
	}
	return done
}

// outputs returns the outputs of the first n steps.
func (m *fakeModel) outputs(n int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, n)
	for i := range out {
		out[i] = m.results[i]
	}
	return out
}

// outputText is the text of a function_call_output: a string, or a list of
// content items of which the text ones count.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return string(raw)
	}
	var parts []string
	for _, it := range items {
		if it.Type == "input_text" || it.Type == "output_text" || it.Type == "text" {
			parts = append(parts, it.Text)
		} else {
			parts = append(parts, "["+it.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

func message(text string) map[string]any {
	return map[string]any{
		"type": "message", "id": "msg_boris", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
	}
}

// stream answers with one output item, as the Responses API's server-sent
// events.
func stream(w http.ResponseWriter, item map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_boris"}})
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.completed", "response": map[string]any{
		"id": "resp_boris", "usage": map[string]any{
			"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		},
	}})
}
