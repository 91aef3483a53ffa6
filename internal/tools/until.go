package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
// first. The pattern is quoted short, and the match and the output share the budget.
func (h *handlers) readUntil(ctx context.Context, sess *session.Session, id, pattern string, wait time.Duration) (*mcp.CallToolResult, *TaskResult, error) {
	quoted := quotePattern(pattern)
	re, err := regexp.Compile(pattern)
	if err != nil {
		why := err.Error()
		if se, ok := errors.AsType[*syntax.Error](err); ok {
			why = se.Code.String() // its Expr may be the whole pattern
			if se.Expr != pattern {
				why += ": " + quotePattern(se.Expr)
			}
		}
		return nil, nil, errorf(CodeInvalidArgument, "until %s is not a regular expression (RE2 syntax): %s", quoted, why)
	}
	started := time.Now()
	match, err := sess.Tasks.Until(ctx, id, re, wait)
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	var b strings.Builder
	if match != nil {
		name := "stdout"
		if match.Stream == shell.Stderr {
			name = "stderr"
		}
		fmt.Fprintf(&b, "until %s matched %s line %d:\n", quoted, name, match.Line)
		for _, l := range match.Before {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		fmt.Fprintf(&b, "> %s\n", match.Text)
	}
	// The line that says there was no match is not written yet: it depends on the read.
	budget := h.contentBudget(ctx) - max(utf8.RuneCountInString(b.String()), len(quoted)+untilNoMatchLen)
	res, out, err := h.readTask(ctx, sess, id, 0, false, max(budget, 1))
	if err != nil {
		return res, out, err
	}
	switch {
	case match != nil:
	case out.Running:
		fmt.Fprintf(&b, "until %s: no match within %s; the task still runs\n", quoted, time.Since(started).Round(time.Millisecond))
	default:
		fmt.Fprintf(&b, "until %s: no match; the task ended\n", quoted)
	}
	body := formatTask(out)
	out.Hint = strings.TrimSpace(b.String() + out.Hint) // the structured form says it too
	return text(b.String() + body), out, nil
}

// untilNoMatchLen bounds the characters of readUntil's line saying there was no match,
// besides the quoted pattern.
const untilNoMatchLen = 64

// maxQuotedPattern is how many characters of an until pattern a result quotes.
const maxQuotedPattern = 80

// quotePattern is pattern quoted, cut to maxQuotedPattern characters with an ellipsis:
// the model wrote it and needs only to recognize it.
func quotePattern(pattern string) string {
	if r := []rune(pattern); len(r) > maxQuotedPattern {
		return strconv.Quote(string(r[:maxQuotedPattern-1])) + "…"
	}
	return strconv.Quote(pattern)
}
