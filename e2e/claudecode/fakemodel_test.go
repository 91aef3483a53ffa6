package claudecode

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
	"time"
)

// toolCall is one step of a fakeModel's script: the tool it calls and the
// arguments it passes.
type toolCall struct {
	Name  string
	Input map[string]any
	// After, if set, makes the input from the text of the previous step's result.
	After func(previous string) map[string]any
}

// fakeModel is a stand-in for the Anthropic Messages API. The agent loop's
// requests (those that offer tools) are answered by a script: the first
// answer calls script[0], the answer to the request carrying its
// tool_result calls script[1], and so on; once every call has a result it
// answers with a final text. Every tool_result it receives is recorded by the
// index of the call it answers. Side requests (titles, summaries, token
// counts) get a short harmless answer.
type fakeModel struct {
	t      *testing.T
	script []toolCall

	// expectMissing makes a scripted tool that Claude Code does not offer
	// a finding to check rather than an error.
	expectMissing bool
	// early makes a scripted tool not offered yet (an interactive session takes
	// a prompt before its MCP servers' tools are listed) an answer asking for
	// the prompt again, counted in tooEarly.
	early    bool // guarded by mu, as the rest
	tooEarly int
	asked    int // how many scripted calls the model has made

	mu      sync.Mutex
	results map[int]toolResult
	missing []string // scripted tools Claude Code did not offer
	texts   []string // the text of the user messages of agent-loop requests, as first seen
	seen    map[string]bool
	changed chan struct{} // closed and replaced whenever a request arrives
}

// finalText is the fake model's last answer, once every call has a result.
const finalText = "All done."

// toolResult is what Claude Code sent back for one scripted call.
type toolResult struct {
	Text    string // the text blocks joined with newlines
	IsError bool
}

func newFakeModel(t *testing.T, script ...toolCall) (*fakeModel, string) {
	m := &fakeModel{t: t, script: script, results: map[int]toolResult{}, seen: map[string]bool{}, changed: make(chan struct{})}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

// result returns the tool_result recorded for script step i.
func (m *fakeModel) result(i int) (toolResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[i]
	return r, ok
}

// missingTools returns the scripted tools that Claude Code did not offer
// when their step came.
func (m *fakeModel) missingTools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.missing)
}

type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
		m.messages(w, r)
	default:
		m.t.Logf("fake model: %s %s answered 404", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

func (m *fakeModel) messages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		m.t.Errorf("fake model: undecodable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var names []string
	for _, tool := range req.Tools {
		names = append(names, tool.Name)
	}
	m.t.Logf("fake model: %s stream=%v messages=%d tools=%v", req.Model, req.Stream, len(req.Messages), names)
	agentLoop := len(req.Tools) > 0
	defer m.signal()
	if !agentLoop {
		answer(w, req, contentBlock{Type: "text", Text: "ok"}, "end_turn")
		return
	}

	// Record every tool_result in the conversation; the number of them is
	// the next step of the script.
	done := 0
	for _, msg := range req.Messages {
		if msg.Role != "user" {
			continue
		}
		m.recordText(msg.Content)
		var blocks []contentBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue // plain string content
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var step int
			if _, err := fmt.Sscanf(b.ToolUseID, "toolu_boris_%d", &step); err != nil {
				m.t.Errorf("fake model: tool_result for unknown tool_use %q", b.ToolUseID)
				continue
			}
			m.mu.Lock()
			if _, seen := m.results[step]; !seen {
				m.t.Logf("fake model: tool_result %s: %s", b.ToolUseID, b.Content)
				m.results[step] = toolResult{Text: resultText(b.Content), IsError: b.IsError}
			}
			m.mu.Unlock()
			done++
		}
	}
	if done < len(m.script) {
		step := m.script[done]
		m.mu.Lock()
		early := m.early && done == 0 && !slices.Contains(names, step.Name)
		if early {
			m.tooEarly++
		}
		m.mu.Unlock()
		if early {
			answer(w, req, contentBlock{Type: "text", Text: "The tools are not there yet."}, "end_turn")
			return
		}
		if !slices.Contains(names, step.Name) {
			m.mu.Lock()
			m.missing = append(m.missing, step.Name)
			m.mu.Unlock()
			if !m.expectMissing {
				m.t.Errorf("fake model: step %d calls %s, which Claude Code does not offer (offered: %v)", done, step.Name, names)
			}
			answer(w, req, contentBlock{Type: "text", Text: "The tool is missing."}, "end_turn")
			return
		}
		m.mu.Lock()
		m.asked = max(m.asked, done+1)
		m.mu.Unlock()
		if step.After != nil {
			previous, _ := m.result(done - 1)
			step.Input = step.After(previous.Text)
		}
		answer(w, req, contentBlock{Type: "tool_use", ID: fmt.Sprintf("toolu_boris_%d", done)}, "tool_use", step)
		return
	}
	answer(w, req, contentBlock{Type: "text", Text: finalText}, "end_turn")
}

// recordText keeps the text of a user message the first time it is seen.
func (m *fakeModel) recordText(raw json.RawMessage) {
	text := resultText(raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen[text] {
		m.seen[text] = true
		m.texts = append(m.texts, text)
	}
}

func (m *fakeModel) signal() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.changed)
	m.changed = make(chan struct{})
}

// await waits until cond, checked whenever a request has been answered, holds, and
// reports whether it did within d.
func (m *fakeModel) await(d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		m.mu.Lock()
		ch := m.changed
		m.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return cond()
		}
	}
}

// requested reports whether the model has made script step i's call.
func (m *fakeModel) requested(i int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked > i
}

// allowEarly sets early.
func (m *fakeModel) allowEarly() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.early = true
}

// earlyAnswers is how many prompts came before the scripted tool was offered.
func (m *fakeModel) earlyAnswers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tooEarly
}

// userText returns the first user message text seen that contains want.
func (m *fakeModel) userText(want string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.texts {
		if strings.Contains(s, want) {
			return s, true
		}
	}
	return "", false
}

// resultText joins the text of a tool_result's content, which is either a
// string or a list of blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []contentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// answer replies with one content block, as JSON or as the Messages API's
// server-sent events when the request asked for a stream. call is the tool
// call of a tool_use block.
func answer(w http.ResponseWriter, req messagesRequest, block contentBlock, stopReason string, call ...toolCall) {
	start := map[string]any{"type": block.Type}
	var input map[string]any
	switch block.Type {
	case "text":
		start["text"] = ""
	case "tool_use":
		input = call[0].Input
		start["id"], start["name"], start["input"] = block.ID, call[0].Name, map[string]any{}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	message := map[string]any{
		"id": "msg_boris", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}

	if !req.Stream {
		full := map[string]any{}
		for k, v := range start {
			full[k] = v
		}
		if block.Type == "text" {
			full["text"] = block.Text
		} else {
			full["input"] = input
		}
		message["content"] = []any{full}
		message["stop_reason"] = stopReason
		writeJSON(w, message)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": message})
	event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
	delta := map[string]any{"type": "text_delta", "text": block.Text}
	if block.Type == "tool_use" {
		args, _ := json.Marshal(input)
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(args)}
	}
	event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{
		"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10},
	})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
