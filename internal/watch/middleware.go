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

// Middleware publishes every tools/call: its start with the key arguments, and its end
// with duration, outcome, and for edits a diff made from the arguments. The handler
// finds the [Call] in its context. session names the calling session.
func Middleware(h *Hub, session func(*mcp.ServerSession) string) mcp.Middleware {
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
			var args keyArgs
			_ = json.Unmarshal(call.Params.Arguments, &args)
			start := h.now()
			h.Publish(Event{Kind: KindCall, Time: start, Session: sid, Call: id, Tool: name, Args: args.show(name), Stop: c.stopKey})

			res, err := next(WithCall(ctx, c), method, req)

			c.finish()
			end := Event{Kind: KindCallEnd, Session: sid, Call: id, Tool: name, DurationMS: h.now().Sub(start).Milliseconds()}
			r, _ := res.(*mcp.CallToolResult)
			describeResult(&end, name, r, c.result, err)
			if h.Watching() && r != nil && !r.IsError {
				end.Diff = diffOf(name, call.Params.Arguments)
			}
			h.Publish(end)
			return res, err
		}
	}
}

// keyArgs are the arguments a call is shown by.
type keyArgs struct {
	Command    string `json:"command"`
	Path       string `json:"path"`
	Pattern    string `json:"pattern"`
	Glob       string `json:"glob"`
	TaskID     string `json:"task_id"`
	Background bool   `json:"run_in_background"`
}

func (a keyArgs) show(tool string) string {
	var s string
	switch {
	case tool == "bash":
		s = a.Command
		if a.Background {
			s += "  (in the background)"
		}
	case a.TaskID != "":
		s = a.TaskID
	case a.Pattern != "":
		s = a.Pattern
		if a.Path != "" {
			s += "  in " + a.Path
		}
		if a.Glob != "" {
			s += "  glob " + a.Glob
		}
	case a.Command != "" && a.Path != "": // str_replace_editor
		s = a.Command + " " + a.Path
	default:
		s = a.Path
	}
	return clip(s, maxArgs)
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
func describeResult(e *Event, tool string, r *mcp.CallToolResult, structured any, err error) {
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
	case tool == "bash" && res.TaskID != "":
		e.Outcome = "started " + res.TaskID
	case res.Status != "":
		e.Outcome = res.Status
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
	switch tool {
	case "bash", "view", "task_output", "task_kill", "task_list":
		// Their text is the output or the file, shown elsewhere or not at all.
	default:
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

// diffOf shows an edit as a diff, made from the arguments the agent sent: str_replace's
// old and new text, a created file's content, inserted text.
func diffOf(tool string, raw json.RawMessage) string {
	var a struct {
		Command    string  `json:"command"`
		Path       string  `json:"path"`
		OldStr     *string `json:"old_str"`
		NewStr     *string `json:"new_str"`
		Content    *string `json:"content"`
		FileText   *string `json:"file_text"`
		InsertLine *int    `json:"insert_line"`
		InsertText *string `json:"insert_text"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch {
	case tool == "str_replace" || tool == "str_replace_editor" && a.Command == "str_replace":
		return Diff(a.Path, "", str(a.OldStr), str(a.NewStr))
	case tool == "create_file":
		return Diff(a.Path, "(new content)", "", str(a.Content))
	case tool == "str_replace_editor" && a.Command == "create":
		return Diff(a.Path, "(new content)", "", str(a.FileText))
	case tool == "str_replace_editor" && a.Command == "insert":
		text := str(a.InsertText)
		if text == "" {
			text = str(a.NewStr)
		}
		where := ""
		if a.InsertLine != nil {
			where = "after line " + strconv.Itoa(*a.InsertLine)
		}
		return Diff(a.Path, where, "", text)
	}
	return ""
}

// Diff renders old replaced by new in path as a unified diff with one hunk, at most
// maxDiffSide lines a side. Lines common to the start and the end of both are shown
// as context.
func Diff(path, where, old, new string) string {
	ol, nl := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(ol) && pre < len(nl) && ol[pre] == nl[pre] {
		pre++
	}
	suf := 0
	for suf < len(ol)-pre && suf < len(nl)-pre && ol[len(ol)-1-suf] == nl[len(nl)-1-suf] {
		suf++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", path, path)
	if where = strings.TrimSpace(where); where != "" {
		fmt.Fprintf(&b, "@@ %s @@\n", where)
	} else {
		b.WriteString("@@\n")
	}
	side := func(mark byte, lines []string) {
		for i, l := range lines {
			if i == maxDiffSide {
				fmt.Fprintf(&b, "%c[… %d more lines]\n", mark, len(lines)-i)
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
	return clip(b.String(), maxDiff)
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
