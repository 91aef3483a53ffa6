package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
	"github.com/mjkoo/boris/internal/term"
	"github.com/mjkoo/boris/internal/watch"
)

// Terminal tasks: the window every command run with tty gets, the most input one
// task_input call takes, and how long it waits by default.
const (
	ttyRows          = term.DefaultRows
	ttyCols          = term.DefaultCols
	maxInput         = 64 << 10
	defaultInputWait = 10 * time.Second
	// readyWait bounds how long bash with tty and run_in_background waits for the
	// program to be ready for input.
	readyWait = 10 * time.Second
)

// TaskInputArgs are task_input's parameters.
type TaskInputArgs struct {
	TaskID string   `json:"task_id" jsonschema:"The task_id of a command started by bash with tty: true."`
	Input  string   `json:"input,omitempty" jsonschema:"Text to type, exactly as given: \"\\n\" ends a line (Enter); control characters go as JSON escapes, such as \"\\u0003\" for Ctrl-C, \"\\u0004\" for Ctrl-D (end of input) and \"\\u001b\" for Esc."`
	Keys   []string `json:"keys,omitempty" jsonschema:"Keys to press after input is typed, by name: enter, tab, backspace, esc, space, up, down, left, right, home, end, pageup, pagedown, delete, insert, f1-f12, ctrl-a to ctrl-z, alt-x. Example: [\"ctrl-c\"]."`
	WaitMS int      `json:"wait_ms,omitempty" jsonschema:"The most to wait for the program to answer, in milliseconds (default 10000, at most 600000). The call returns as soon as the program waits for input again, exits, or (when that cannot be seen) prints nothing for a second."`
}

func addTaskInput(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "task_input",
		Description: `Type at an interactive program started by bash with tty: true (a REPL, a prompt, a debugger, a full-screen program such as vim or less) and get its answer.

input is typed as given: "\n" is Enter, and control characters are JSON escapes ("\u0003" Ctrl-C, "\u0004" Ctrl-D, "\u001b" Esc, "\u001b[A" up arrow). keys presses named keys after the input: ["ctrl-c"], ["esc"], ["up", "enter"]. Ctrl-C interrupts only the program in the foreground: a shell session survives it.

The call returns as soon as the program waits for input again (seen from the kernel, not guessed from a delay), exits, or wait_ms passes, with the output written since the last read (escape sequences removed). For a full-screen program it returns the rendered screen instead, with the cursor position.`,
		Annotations: &mcp.ToolAnnotations{Title: "Type at an interactive program", DestructiveHint: new(true), OpenWorldHint: new(true)},
	}, h.taskInput)
}

func (h *handlers) taskInput(ctx context.Context, req *mcp.CallToolRequest, in TaskInputArgs) (*mcp.CallToolResult, *TaskResult, error) {
	keys, err := checkInput(in)
	if err != nil {
		return nil, nil, err
	}
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	wait := defaultInputWait
	if in.WaitMS > 0 {
		wait = min(time.Duration(in.WaitMS)*time.Millisecond, maxWait)
	}
	if tok := req.Params.GetProgressToken(); tok != nil {
		defer h.stillWaiting(ctx, req, tok)()
	}
	x, err := sess.Tasks.Send(ctx, in.TaskID, []byte(in.Input), keys, tasks.Until{Wait: wait}, h.contentBudget(ctx), h.face().omitted)
	if err != nil {
		return nil, nil, h.ttyError(err, sess)
	}
	out := ttyTaskResult(x, wait, false)
	return text(formatTask(out)), out, nil
}

// checkInput refuses what the schema cannot, and reads the key names.
func checkInput(in TaskInputArgs) ([]term.Key, error) {
	switch {
	case in.WaitMS < 0:
		return nil, errorf(CodeInvalidArgument, "wait_ms %d is negative: give milliseconds, at most %d", in.WaitMS, maxWait.Milliseconds())
	case len(in.Input) > maxInput:
		return nil, errorf(CodeTooLarge, "input is %d bytes, more than the %d one call may type: send it in parts, or write it to a file and have the program read that", len(in.Input), maxInput)
	case len(in.Keys) > 256:
		return nil, errorf(CodeTooLarge, "keys names %d keys, more than the 256 one call may press: send them in parts", len(in.Keys))
	}
	keys := make([]term.Key, 0, len(in.Keys))
	for _, name := range in.Keys {
		k, err := term.ParseKey(name)
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "%v; or type the character itself in input, such as \"\\u0003\" for Ctrl-C", err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// ttyError words the errors of terminal tasks with what to do next.
func (h *handlers) ttyError(err error, sess *session.Session) error {
	f := h.face()
	switch {
	case errors.Is(err, tasks.ErrNoTTY):
		return errorf(CodeInvalidArgument, "%v: only a command started by %s with tty: true has a terminal to type at or a screen to read; start it again that way", err, f.bash)
	case errors.Is(err, tasks.ErrEnded):
		return errorf(CodeTaskEnded, "%v, so it takes no more input; %s (%s) returns its last output, and %s with tty: true starts it again", err, f.taskOutput, f.taskIDArg, f.bash)
	case errors.Is(err, tasks.ErrInputBlocked):
		return errorf(CodeFailed, "%v: the program has not been reading its input for %s; look at its screen with %s (screen: true), or stop it with %s", err, "a while", f.taskOutput, f.taskKill)
	case errors.Is(err, tasks.ErrTTYLimit):
		return fmt.Errorf("%w; stop one with %s (%s shows them)", err, f.taskKill, f.taskList)
	}
	return taskError(err, sess, f)
}

// ttyTaskResult is the result of an exchange with a terminal task that waited up to wait.
func ttyTaskResult(x tasks.Exchange, wait time.Duration, screen bool) *TaskResult {
	out := taskResult(x.Snapshot)
	out.Hint = ""
	out.TTY = true
	out.Reason = reason(x, wait)
	if x.Screen.Alt || screen {
		out.Screen = screenText(x.Screen)
	}
	if x.Screen.Alt && out.Running {
		// What a full-screen program prints is drawing, not text: its screen says it.
		out.Stdout, out.StdoutTruncated, out.StdoutFile = "", false, ""
	}
	if out.Stdout == "" && out.Screen == "" {
		out.Hint = noNewOutput
	}
	return out
}

// reason says in words why an exchange with a terminal task ended.
func reason(x tasks.Exchange, wait time.Duration) string {
	switch x.Why {
	case tasks.WhyInput:
		if x.View == term.Polling {
			return "waiting for input (it polls its terminal and printed nothing for a second)"
		}
		return "waiting for input"
	case tasks.WhyFullScreen:
		return "full-screen program, waiting for keys"
	case tasks.WhyQuiet:
		return "no output for a second (it may be waiting for input)"
	case tasks.WhyDeadline:
		if x.Foreground != "" {
			return fmt.Sprintf("still busy after %d ms (%s runs in the foreground)", wait.Milliseconds(), x.Foreground)
		}
		return fmt.Sprintf("still busy after %d ms", wait.Milliseconds())
	case tasks.WhyCancelled:
		return "the call was cancelled; the program still runs"
	}
	return ""
}

// screenText is the screen as the model reads it: a line saying its size and where the
// cursor is, then its lines.
func screenText(sn term.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[screen %dx%d, cursor at line %d, column %d]\n", ttyCols, ttyRows, sn.Row+1, sn.Col+1)
	b.WriteString(sn.Text())
	if sn.Skipped {
		b.WriteString("[output came faster than the screen could show it; some was skipped]\n")
	}
	return b.String()
}

// bashTTY is bash with tty: the command runs in a pseudo-terminal and comes back when it
// ends, or early, as a task, when it waits for input or is a full-screen program.
func (h *handlers) bashTTY(ctx context.Context, sess *session.Session, c session.Command, out *BashResult) (*mcp.CallToolResult, *BashResult, error) {
	c.TTY = &shell.TTYSize{Rows: ttyRows, Cols: ttyCols}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wc := watch.CallFrom(ctx)
	tw := wc.NewTask()
	if tw != nil {
		wc.OnStop(func() { cancel(tasks.ErrStoppedByUser) })
		c.OnOutput = teeOutput(c.OnOutput, plainTo(tw.Output))
	}
	started := func(t *tasks.Task) {
		tw.Started(t.ID, c.Script, func() { _, _ = sess.Tasks.KillCause(t.ID, tasks.ErrStoppedByUser) }, t.Done(), t.Status)
	}
	ran, err := sess.RunTTY(ctx, c, h.contentBudget(ctx), started)
	if err != nil {
		return nil, nil, h.ttyError(err, sess)
	}
	out.TTY = true
	if ran.Task == nil {
		ran.Stdout.Text = term.Plain(ran.Stdout.Text)
		h.bashResult(ctx, &ran.Ran, c.Timeout, out)
		if ran.Screen.Alt {
			out.Screen = screenText(ran.Screen)
		}
		return text(formatBash(out)), out, nil
	}
	return h.ttyStarted(ran, c.Timeout, "it goes on as background task "+ran.Task.ID, out)
}

// startTTY is bash with tty and run_in_background: it returns once the program is
// ready for input (or has taken the screen, or ended), or after readyWait, with what it
// printed until then.
func (h *handlers) startTTY(ctx context.Context, sess *session.Session, c session.Command, out *BashResult) (*mcp.CallToolResult, *BashResult, error) {
	c.TTY = &shell.TTYSize{Rows: ttyRows, Cols: ttyCols}
	tw := watch.CallFrom(ctx).NewTask()
	if tw != nil {
		c.OnOutput = teeOutput(c.OnOutput, plainTo(tw.Output))
	}
	t, dir, moved, err := sess.Start(c)
	if err != nil {
		return nil, nil, h.ttyError(err, sess)
	}
	tw.Started(t.ID, c.Script, func() { _, _ = sess.Tasks.KillCause(t.ID, tasks.ErrStoppedByUser) }, t.Done(), t.Status)
	x, err := sess.Tasks.Settle(ctx, t.ID, tasks.Until{Wait: readyWait}, h.contentBudget(ctx), h.face().omitted)
	if err != nil {
		return nil, nil, h.ttyError(err, sess)
	}
	ran := &session.TTYRan{Ran: session.Ran{Moved: moved, Cwd: dir, Stdout: x.Stdout}, Task: t, Why: x.Why, View: x.View, Screen: x.Screen}
	if x.Why == tasks.WhyExited {
		res, _ := t.Result()
		ran.Result = res
		h.bashResult(ctx, &ran.Ran, 0, out)
		out.TTY, out.TaskID = true, t.ID
		out.Stdout = term.Plain(out.Stdout)
		return text(formatBash(out)), out, nil
	}
	return h.ttyStarted(ran, readyWait, fmt.Sprintf("started in the background in %s as task %s", dir, t.ID), out)
}

// ttyStarted is the result of a terminal command that goes on as a task.
func (h *handlers) ttyStarted(ran *session.TTYRan, timeout time.Duration, lead string, out *BashResult) (*mcp.CallToolResult, *BashResult, error) {
	f := h.face()
	x := tasks.Exchange{Why: ran.Why, View: ran.View, Screen: ran.Screen}
	out.TaskID, out.Cwd, out.Reason = ran.Task.ID, ran.Cwd, reason(x, timeout)
	out.Stdout, out.StdoutTruncated, out.StdoutFile = ran.Stdout.Text, ran.Stdout.Truncated, ran.Stdout.SpillPath
	if ran.Screen.Alt {
		out.Screen = screenText(ran.Screen)
		out.Stdout, out.StdoutTruncated, out.StdoutFile = "", false, ""
	} else {
		out.Stdout = term.Plain(out.Stdout)
	}
	if ran.Moved != nil {
		out.Notes = append(out.Notes, movedNote(ran.Moved))
	}
	out.Hint = fmt.Sprintf("%s: type at it with task_input (%s %q, input \"...\\n\" or keys [...]), read it with %s (screen: true for the screen), stop it with %s.", lead, f.taskIDArg, ran.Task.ID, f.taskOutput, f.taskKill)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\nstatus: running, %s\n%s\n", f.taskIDArg, ran.Task.ID, out.Reason, out.Hint)
	for _, n := range out.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	writeTTYStreams(&b, out.Stdout, out.Screen, out.Omitted)
	return text(b.String()), out, nil
}

// writeTTYStreams writes a terminal's output and screen blocks that are not empty, with
// the lines saying what a cut left out at both ends, as writeStreams does.
func writeTTYStreams(b *strings.Builder, output, screen string, cut []string) {
	var notes []string
	for _, n := range cut {
		notes = append(notes, "cut: "+n)
	}
	bothEnds(b, notes, func(b *strings.Builder) {
		if output != "" {
			b.WriteString("output:\n" + output)
			if !strings.HasSuffix(output, "\n") {
				b.WriteByte('\n')
			}
		}
		b.WriteString(screen)
	})
}

// plainTo passes a terminal's output to w as plain text.
func plainTo(w func(int, []byte)) func(int, []byte) {
	return func(s int, p []byte) { w(s, []byte(term.Plain(string(p)))) }
}
