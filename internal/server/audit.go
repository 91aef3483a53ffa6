package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/tools"
)

// audit logs every tool call at info level: session, tool, a short argument summary,
// duration and outcome (ok, an error code, a command's non-zero exit status or signal, a
// timeout or a cancel).
func (s *Server) audit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || !s.log.Enabled(ctx, slog.LevelInfo) {
			return next(ctx, method, req)
		}
		start := time.Now()
		ctx, stopped := tools.WithOutcome(ctx)
		res, err := next(ctx, method, req)
		outcome := "ok"
		switch r, _ := res.(*mcp.CallToolResult); {
		case err != nil:
			outcome = "protocol error"
		case r != nil && r.IsError:
			outcome = "error"
			if code, ok := r.Meta["code"].(string); ok {
				outcome = "error " + code
			}
		case *stopped != "":
			outcome = *stopped
		}
		var sid string
		if call.Session != nil {
			if st, err := s.session(call.Session); err == nil {
				sid = st.ID // over STDIO the protocol has no session id; ours is random
			}
		}
		s.log.Info("tool call", "session", sid, "tool", call.Params.Name,
			summarize(call.Params.Arguments, s.cfg.Token, tools.ViewCall(call.Params.Name, nil).Logged),
			"duration_ms", time.Since(start).Milliseconds(), "outcome", outcome)
		return res, err
	}
}

// maxAuditArgs bounds the argument summary of one log line: a request with thousands of
// arguments must not write a line of megabytes.
const maxAuditArgs = 4 << 10

// summarize renders raw tool arguments for the log as the attributes of one group, each
// value as it was sent (a command as written, so that the log handler escapes it once),
// keeping it short and free of secrets: the token is taken out of every value and name,
// only the arguments the tool table marks as logged show their values (the others, such
// as file contents and edit strings, only their length), long values are cut, and past
// maxAuditArgs bytes in all the remaining arguments are only counted.
func summarize(raw json.RawMessage, token string, logged func(arg string) bool) slog.Attr {
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return slog.String("args", fmt.Sprintf("(%d bytes, not an object)", len(raw)))
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]any, 0, len(keys))
	n := 0
	for i, k := range keys {
		name := redact(k, token).(string)
		if len(name) > 100 {
			name = fmt.Sprintf("(a %d-byte name)", len(name))
		}
		val := auditValue(args[k], logged(k), token)
		if n += len(name) + len(val) + 4; n > maxAuditArgs-64 {
			attrs = append(attrs, slog.Int("more_arguments", len(keys)-i))
			break
		}
		attrs = append(attrs, slog.String(name, val))
	}
	return slog.Group("args", attrs...)
}

// auditValue is how the log shows an argument's value: a string as it is, anything else
// as JSON, cut at 200 bytes; a value not shown, as its length.
func auditValue(v any, shown bool, token string) string {
	if !shown {
		if str, ok := v.(string); ok {
			return fmt.Sprintf("(%d chars)", utf8.RuneCountInString(str))
		}
		return "(…)"
	}
	val, ok := redact(v, token).(string)
	if !ok {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(redact(v, token))
		val = strings.TrimSuffix(b.String(), "\n")
		if token != "" {
			val = strings.ReplaceAll(val, token, "[token]") // a token of digits, in a number
		}
	}
	if len(val) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(val[cut]) {
			cut--
		}
		val = val[:cut] + "…"
	}
	return val
}

// redact replaces every occurrence of token in the strings inside v.
func redact(v any, token string) any {
	if token == "" {
		return v
	}
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, token, "[token]")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redact(e, token)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[redact(k, token).(string)] = redact(e, token)
		}
		return out
	}
	return v
}
