package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
)

// boundWait is how long task_output waits: as asked, at most maxWait, by default the
// bash timeout when it waits for a pattern, and ending before the client's deadline
// (--call-deadline, or the client's profile) when there is one.
func (h *handlers) boundWait(ctx context.Context, asked time.Duration, until bool) time.Duration {
	wait := min(asked, maxWait)
	if wait <= 0 && until {
		wait = h.Config.Timeout
	}
	if d := h.callDeadline(ctx); d > 0 {
		wait = min(wait, d-deadlineMargin(d))
	}
	return wait
}

// readUntil is task_output with until: it waits up to wait for a new line matching the
// pattern, or for the task to end, then reads the task as task_output does, the match
// first.
func (h *handlers) readUntil(ctx context.Context, sess *session.Session, id, pattern string, wait time.Duration) (*mcp.CallToolResult, *TaskResult, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, nil, errorf(CodeInvalidArgument, "until %q is not a regular expression (RE2 syntax): %v", pattern, err)
	}
	started := time.Now()
	match, err := sess.Tasks.Until(ctx, id, re, wait)
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	res, out, err := h.readTask(ctx, sess, id, 0, false)
	if err != nil {
		return res, out, err
	}
	var b strings.Builder
	switch {
	case match != nil:
		name := "stdout"
		if match.Stream == shell.Stderr {
			name = "stderr"
		}
		fmt.Fprintf(&b, "until %q matched %s line %d:\n", pattern, name, match.Line)
		for _, l := range match.Before {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		fmt.Fprintf(&b, "> %s\n", match.Text)
	case out.Running:
		fmt.Fprintf(&b, "until %q: no match within %s; the task still runs\n", pattern, time.Since(started).Round(time.Millisecond))
	default:
		fmt.Fprintf(&b, "until %q: no match; the task ended\n", pattern)
	}
	body := formatTask(out)
	out.Hint = strings.TrimSpace(b.String() + out.Hint) // the structured form says it too
	return text(b.String() + body), out, nil
}
