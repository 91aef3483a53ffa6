package watch

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on what one event shows of a call.
const (
	maxArgs     = 500      // characters of key arguments
	maxSummary  = 300      // characters of an outcome or summary line
	maxDiffSide = 200      // lines on each side of a diff
	maxDiff     = 16 << 10 // bytes of a diff
)

// ToolCall says how one tool call reads in the live view. The tool table knows each
// tool's arguments, and makes one per call; the live view names no tool.
type ToolCall interface {
	// Summary is the call in one line: the command run, the file read, the pattern sought.
	Summary() string
	// Diff is the change the call made, once it has succeeded, as [Diff] renders it; ""
	// when the call changes no file.
	Diff() string
	// ResultLine reports whether the first line of the result's text says what the call
	// did (a search's count, an edit's confirmation), rather than being output or a
	// file's content, which the view shows elsewhere or not at all.
	ResultLine() bool
	// Stoppable reports whether the person watching may stop the call: it runs a command
	// until it ends, rather than starting it in the background.
	Stoppable() bool
}

// Middleware publishes every tools/call: its start with a summary of its arguments, and
// its end with duration, outcome, and for edits a diff. describe says how a call reads;
// session names the calling session. The handler finds the [Call] in its context.
func Middleware(h *Hub, session func(*mcp.ServerSession) string, describe func(tool string, args json.RawMessage) ToolCall) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || call.Params == nil {
				return next(ctx, method, req)
			}
			sid := session(call.Session)
			id := h.calls.Add(1)
			c := &Call{hub: h, id: id, session: sid, stopKey: rand.Text()}
			c.out = &output{hub: h, session: sid, call: id}
			name := call.Params.Name
			tc := describe(name, call.Params.Arguments)
			start := h.now()
			ev := Event{Kind: KindCall, Time: start, Session: sid, Call: id, Tool: name, Args: clip(tc.Summary(), maxArgs)}
			if tc.Stoppable() {
				ev.Stop = c.stopKey
			}
			h.Publish(ev)

			res, err := next(WithCall(ctx, c), method, req)

			c.finish()
			end := Event{Kind: KindCallEnd, Session: sid, Call: id, Tool: name, DurationMS: h.now().Sub(start).Milliseconds()}
			r, _ := res.(*mcp.CallToolResult)
			describeResult(&end, tc, r, c.result, err)
			end.Checkpoint, end.Files = c.checkpoint, c.files
			if h.Watching() && r != nil && !r.IsError {
				end.Diff = clip(tc.Diff(), maxDiff)
			}
			h.Publish(end)
			return res, err
		}
	}
}

// result is what the outcome is read from, in the structured results of bash and the
// task tools.
type result struct {
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal"`
	TimedOut bool   `json:"timed_out"`
	Stopped  string `json:"stopped"`
	TaskID   string `json:"task_id"`
	Status   string `json:"status"`
	Cwd      string `json:"cwd"`
}

// describeResult fills in how the call ended, from the handler's structured result when it
// gave one, else from the result's structuredContent.
func describeResult(e *Event, tc ToolCall, r *mcp.CallToolResult, structured any, err error) {
	switch {
	case err != nil:
		e.Error, e.Outcome = true, "protocol error: "+clip(firstLine(err.Error()), maxSummary)
		return
	case r == nil:
		e.Outcome = "ok"
		return
	case r.IsError:
		e.Error, e.Outcome = true, "error"
		if code, ok := r.Meta["code"].(string); ok {
			e.Outcome += " " + code
		}
		e.Summary = clip(firstLine(textOf(r)), maxSummary)
		return
	}
	var res result
	if structured != nil {
		if b, err := json.Marshal(structured); err == nil {
			_ = json.Unmarshal(b, &res)
		}
	} else {
		switch sc := r.StructuredContent.(type) {
		case json.RawMessage:
			_ = json.Unmarshal(sc, &res)
		case []byte:
			_ = json.Unmarshal(sc, &res)
		}
	}
	e.Cwd = res.Cwd
	switch {
	case res.TimedOut:
		e.Outcome = "timed out"
	case res.Stopped != "":
		e.Outcome = res.Stopped
	case res.Status != "":
		e.Outcome = res.Status
	case res.TaskID != "": // a command started as a task; reading a task gives its status
		e.Outcome = "started " + res.TaskID
	case res.ExitCode != nil:
		e.Outcome = "exit " + strconv.Itoa(*res.ExitCode)
	default:
		e.Outcome = "ok"
	}
	if res.ExitCode != nil && res.Status == "" && e.Outcome != "exit "+strconv.Itoa(*res.ExitCode) {
		e.Outcome += fmt.Sprintf(" (exit %d)", *res.ExitCode)
	}
	if res.Signal != "" && res.Status == "" {
		e.Outcome += ", " + res.Signal
	}
	if tc.ResultLine() {
		e.Summary = clip(firstLine(textOf(r)), maxSummary) // search counts, edit confirmations
	}
}

func textOf(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// Hunk is one change to a file: old replaced by new, where says where ("" when the
// text itself shows it).
type Hunk struct{ Where, Old, New string }

// Diff renders hunks of path as a unified diff, at most maxDiffSide lines a side of each
// hunk. Lines common to the start and the end of a hunk's old and new text are shown as
// context.
func Diff(path string, hunks ...Hunk) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", path, path)
	for _, h := range hunks {
		h.write(&b)
	}
	return clip(b.String(), maxDiff)
}

func (h Hunk) write(b *strings.Builder) {
	ol, nl := splitLines(h.Old), splitLines(h.New)
	pre := 0
	for pre < len(ol) && pre < len(nl) && ol[pre] == nl[pre] {
		pre++
	}
	suf := 0
	for suf < len(ol)-pre && suf < len(nl)-pre && ol[len(ol)-1-suf] == nl[len(nl)-1-suf] {
		suf++
	}
	if where := strings.TrimSpace(h.Where); where != "" {
		fmt.Fprintf(b, "@@ %s @@\n", where)
	} else {
		b.WriteString("@@\n")
	}
	side := func(mark byte, lines []string) {
		for i, l := range lines {
			if i == maxDiffSide {
				fmt.Fprintf(b, "%c[… %d more lines]\n", mark, len(lines)-i)
				return
			}
			b.WriteByte(mark)
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	side(' ', ol[:pre])
	side('-', ol[pre:len(ol)-suf])
	side('+', nl[pre:len(nl)-suf])
	side(' ', ol[len(ol)-suf:])
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
