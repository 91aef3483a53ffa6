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
)

// auditShown are the arguments whose values are logged; file contents, edit strings and
// anything else are logged only as their length.
var auditShown = map[string]bool{
	"command": true, "path": true, "pattern": true, "glob": true, "type": true,
	"task_id": true, "view_range": true, "output_mode": true, "timeout": true,
	"run_in_background": true, "replace_all": true, "insert_line": true,
}

// audit logs every tool call at info level: session, tool, a short argument summary,
// duration and outcome.
func (s *Server) audit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || !s.log.Enabled(ctx, slog.LevelInfo) {
			return next(ctx, method, req)
		}
		start := time.Now()
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
		}
		var sid string
		if call.Session != nil {
			if st, err := s.session(call.Session); err == nil {
				sid = st.ID // over STDIO the protocol has no session id; ours is random
			}
		}
		s.log.Info("tool call", "session", sid, "tool", call.Params.Name,
			"args", summarize(call.Params.Arguments, s.cfg.Token),
			"duration_ms", time.Since(start).Milliseconds(), "outcome", outcome)
		return res, err
	}
}

// summarize renders raw tool arguments for the log, keeping it short and free of secrets.
func summarize(raw json.RawMessage, token string) string {
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
	for _, k := range keys {
		v := args[k]
		if !auditShown[k] {
			if str, ok := v.(string); ok {
				parts = append(parts, fmt.Sprintf("%s=(%d chars)", k, utf8.RuneCountInString(str)))
			} else {
				parts = append(parts, k+"=(…)")
			}
			continue
		}
		b, _ := json.Marshal(v)
		val := string(b)
		if token != "" {
			val = strings.ReplaceAll(val, token, "[token]")
		}
		if len(val) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(val[cut]) {
				cut--
			}
			val = val[:cut] + "…"
		}
		parts = append(parts, k+"="+val)
	}
	return strings.Join(parts, " ")
}
