package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/clients"
	"github.com/mjkoo/boris/internal/mcptask"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
)

// A foreground command that would reach the client's deadline (--call-deadline) becomes a
// background task deadlineMargin before it: a tenth of the deadline, from 1 to 10 s, and
// never more than half of it.
const (
	minDeadlineMargin = time.Second
	maxDeadlineMargin = 10 * time.Second
)

// detachAfter is how long a foreground command runs before it becomes a background task,
// or 0 for never: the task threshold when the call may become an MCP task, else shortly
// before the client's deadline, if one is set.
func (h *handlers) detachAfter(ctx context.Context) time.Duration {
	var after time.Duration
	if d := h.callDeadline(ctx); d > 0 {
		after = d - deadlineMargin(d)
	}
	if t := h.Config.TaskAfter; t > 0 && mcptask.OfferFrom(ctx) != nil && (after == 0 || t < after) {
		after = t
	}
	return after
}

type callDeadlineKey struct{}

// WithCallDeadline returns ctx telling the tools that the client of this call gives up
// after d, as a sandbox router does after its proxy timeout: like --call-deadline, for one
// call. The shorter of the two applies.
func WithCallDeadline(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callDeadlineKey{}, d)
}

// callDeadline is when the calling client gives up on a call: --call-deadline, else the
// hard timer its profile knows (the Agents SDK's, cline's and the Inspector's 60 s), or the
// deadline of the router the call came through if that is sooner; 0 for none known.
func (h *handlers) callDeadline(ctx context.Context) time.Duration {
	d := h.Config.CallDeadline
	if d == 0 {
		d = profileDeadline(callerProfile(ctx))
	}
	if v, ok := ctx.Value(callDeadlineKey{}).(time.Duration); ok && v > 0 && (d == 0 || v < d) {
		d = v
	}
	return d
}

// profileDeadline is the deadline a profile knows; tests make it short.
var profileDeadline = func(p clients.Profile) time.Duration { return p.Deadline }

func deadlineMargin(d time.Duration) time.Duration {
	return min(max(d/10, minDeadlineMargin), maxDeadlineMargin, d/2)
}

// run runs c in the foreground, or, past [handlers.detachAfter], as a background task
// that it returns instead of a result.
func (h *handlers) run(ctx context.Context, sess *session.Session, c session.Command) (*session.Ran, *tasks.Task, error) {
	after := h.detachAfter(ctx)
	if after <= 0 || (c.Timeout > 0 && c.Timeout <= after) {
		ran, err := sess.Run(ctx, c)
		return ran, nil, err
	}
	return sess.RunOrDetach(ctx, c, after)
}

// detached is the result of a foreground command that became background task t: when the
// call may become an MCP task it does, and the client gets the task's result when it
// ends; else the result gives the task's id, its output so far and how to follow it.
func (h *handlers) detached(ctx context.Context, sess *session.Session, t *tasks.Task, after, timeout time.Duration, out *BashResult) (*mcp.CallToolResult, *BashResult, error) {
	setOutcome(ctx, "backgrounded")
	f := h.face()
	var stdout, stderr shell.Excerpt
	if h.offerTask(ctx, t, timeout) {
		// The client gets the task and, at its end, the whole output: task_output is
		// left to start from the beginning.
		stdout, stderr = t.Output(h.contentBudget(ctx), f.omitted)
	} else {
		snap, err := sess.Tasks.Output(ctx, t.ID, 0, h.contentBudget(ctx), f.omitted)
		if err != nil {
			return nil, nil, taskError(err, sess, f)
		}
		stdout, stderr = snap.Stdout, snap.Stderr
	}
	out.TaskID = t.ID
	out.Hint = fmt.Sprintf("still running after %s, so it goes on in the background as task %s rather than reach the client's time limit. Read what it prints next with %s (%s %q%s); stop it with %s. Its timeout of %d ms still applies; its cd and export will not carry over to later commands.",
		after.Round(time.Millisecond), t.ID, f.taskOutput, f.taskIDArg, t.ID, f.waitHint, f.taskKill, timeout.Milliseconds())
	out.Stdout, out.StdoutTruncated, out.StdoutFile = stdout.Text, stdout.Truncated, stdout.SpillPath
	out.Stderr, out.StderrTruncated, out.StderrFile = stderr.Text, stderr.Truncated, stderr.SpillPath
	out.Omitted = omitted(stdout, stderr)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n%s\n", f.taskIDArg, t.ID, out.Hint)
	for _, n := range out.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if out.Stdout != "" || out.Stderr != "" {
		b.WriteString("output so far:\n")
	}
	writeStreams(&b, out.Stdout, out.Stderr, out.Omitted)
	return text(b.String()), out, nil
}

// offerTask makes the call an MCP task standing for t, if the call may become one, and
// reports whether it did.
func (h *handlers) offerTask(ctx context.Context, t *tasks.Task, timeout time.Duration) bool {
	o := mcptask.OfferFrom(ctx)
	if o != nil {
		o.Accept(t.ID, &taskWork{h: h, t: t, timeout: timeout, budget: h.contentBudget(ctx)})
	}
	return o != nil
}

// taskWork is a background task as the MCP task it became.
type taskWork struct {
	h       *handlers
	t       *tasks.Task
	timeout time.Duration // the command's timeout; 0 for one started in the background
	budget  int           // the content budget of the client that made the call
}

func (w *taskWork) Done() <-chan struct{} { return w.t.Done() }
func (w *taskWork) Status() string        { return w.t.Status() }
func (w *taskWork) Cancel()               { w.t.Stop(tasks.ErrCancelled) }

// Result is the command's result as a foreground call would have returned it, with its
// whole output, said to come from the background task.
func (w *taskWork) Result() *mcp.CallToolResult {
	res, _ := w.t.Result()
	f := w.h.face()
	stdout, stderr := w.t.Output(w.budget, f.omitted)
	out := &BashResult{TaskID: w.t.ID}
	ctx := context.Background()
	w.h.bashResult(ctx, &session.Ran{Result: res, Stdout: stdout, Stderr: stderr}, w.timeout, out)
	if w.timeout == 0 {
		out.TimeoutMS = 0
	}
	out.Notes = append([]string{fmt.Sprintf("ran in the background as task %s (%s and %s take its id); its cd and export did not carry over", w.t.ID, f.taskOutput, f.taskKill)}, out.Notes...)
	r := text(formatBash(out))
	if w.h.Config.StructuredOutput {
		r.StructuredContent = out
	}
	return r
}

// localTaskID is the background task id within an MCP task id (task-3.RANDOM), or id.
func localTaskID(id string) string {
	before, _, _ := strings.Cut(strings.TrimSpace(id), ".")
	return before
}
