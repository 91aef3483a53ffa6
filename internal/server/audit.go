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
// duration and outcome.
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
			"args", summarize(call.Params.Arguments, s.cfg.Token, tools.ViewCall(call.Params.Name, nil).Logged),
			"duration_ms", time.Since(start).Milliseconds(), "outcome", outcome)
		return res, err
	}
}

// maxAuditArgs bounds the argument summary of one log line: a request with thousands of
// arguments must not write a line of megabytes.
const maxAuditArgs = 4 << 10

// summarize renders raw tool arguments for the log, keeping it short and free of secrets:
// only the arguments the tool table marks as logged show their values, the others only
// their length.
// The token is taken out of every value before it is encoded, so that characters JSON
// escapes (<, >, &, ") cannot hide it; the whole summary is cut at maxAuditArgs bytes.
func summarize(raw json.RawMessage, token string, logged func(arg string) bool) string {
	s := summarizeArgs(raw, token, logged)
	if len(s) > maxAuditArgs {
		cut := maxAuditArgs
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s… (summary cut: %d of %d bytes shown)", s[:cut], cut, len(s))
	}
	return s
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

func summarizeArgs(raw json.RawMessage, token string, logged func(arg string) bool) string {
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return fmt.Sprintf("(%d bytes, not an object)", len(raw))
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	n := 0
	for i, k := range keys {
		name := redact(k, token).(string)
		if len(name) > 100 {
			name = fmt.Sprintf("(a %d-byte name)", len(name))
		}
		var part string
		switch v := args[k]; {
		case !logged(k):
			if str, ok := v.(string); ok {
				part = fmt.Sprintf("%s=(%d chars)", name, utf8.RuneCountInString(str))
			} else {
				part = name + "=(…)"
			}
		default:
			b, _ := json.Marshal(redact(v, token))
			val := string(b)
			if token != "" {
				val = strings.ReplaceAll(val, token, "[token]") // a token of digits, in a number
			}
			if len(val) > 200 {
				cut := 200
				for cut > 0 && !utf8.RuneStart(val[cut]) {
					cut--
				}
				val = val[:cut] + "…"
			}
			part = name + "=" + val
		}
		if n += len(part) + 1; n > maxAuditArgs-64 {
			parts = append(parts, fmt.Sprintf("(%d more arguments)", len(keys)-i))
			break
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}
