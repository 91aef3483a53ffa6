package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
	"github.com/mjkoo/boris/internal/watch"
)

// maxTimeout is the largest bash timeout a call may ask for.
const maxTimeout = 600_000 * time.Millisecond

// Progress notifications (see [handlers.progress]): none for a command that ends within
// progressDelay, then at most one every progressInterval, each carrying at most
// progressMaxBytes of the newest output, one at least every progressQuiet while the
// command prints nothing, and none within progressGuard of the result.
const (
	progressDelay    = time.Second
	progressInterval = 500 * time.Millisecond
	progressQuiet    = 10 * time.Second
	progressMaxBytes = 4 << 10
	progressGuard    = 250 * time.Millisecond
)

// BashArgs are the bash tool's parameters.
type BashArgs struct {
	Command         string `json:"command" jsonschema:"The shell command or script to run. Multi-line scripts, heredocs, pipes, && and & all work; the exit status is that of the last statement."`
	Timeout         int    `json:"timeout,omitempty" jsonschema:"Timeout in milliseconds (default: the server's --timeout; maximum 600000). On timeout the command's whole process group is stopped and the output so far is returned."`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"Start the command as a background task and return its task_id at once; read its output with task_output and stop it with task_kill."`
	Description     string `json:"description,omitempty" jsonschema:"A short description of what the command does (optional; not used)."`
	TTY             bool   `json:"tty,omitempty" jsonschema:"Run the command in a terminal (a pseudo-terminal, 120x30, TERM=xterm-256color), for interactive programs: REPLs, prompts, debuggers, full-screen programs. The call returns early, as a task to type at with task_input, once the program waits for input or takes the whole screen."`
}

// BashResult is the structured form of a bash result.
type BashResult struct {
	ExitCode        *int     `json:"exit_code,omitempty" jsonschema:"Exit status as $? shows it; 128+n when killed by signal n. Absent for a background start."`
	Signal          string   `json:"signal,omitempty" jsonschema:"The signal that killed the shell, such as SIGTERM."`
	TimedOut        bool     `json:"timed_out,omitempty" jsonschema:"The command ran past its timeout and was stopped."`
	Stopped         string   `json:"stopped,omitempty" jsonschema:"Why Boris stopped the command, if it did."`
	DurationMS      int64    `json:"duration_ms,omitempty" jsonschema:"How long the command ran, in milliseconds."`
	TimeoutMS       int64    `json:"timeout_ms,omitempty" jsonschema:"The timeout the command ran under, in milliseconds."`
	Cwd             string   `json:"cwd,omitempty" jsonschema:"The session's working directory after the command."`
	Stdout          string   `json:"stdout,omitempty" jsonschema:"Standard output, within the budget."`
	Stderr          string   `json:"stderr,omitempty" jsonschema:"Standard error, within the budget."`
	StdoutTruncated bool     `json:"stdout_truncated,omitempty" jsonschema:"Standard output was longer than the budget; only its head and tail are shown."`
	StderrTruncated bool     `json:"stderr_truncated,omitempty" jsonschema:"Standard error was longer than the budget; only its head and tail are shown."`
	StdoutFile      string   `json:"stdout_file,omitempty" jsonschema:"File holding the full standard output when it was truncated."`
	StderrFile      string   `json:"stderr_file,omitempty" jsonschema:"File holding the full standard error when it was truncated."`
	TaskID          string   `json:"task_id,omitempty" jsonschema:"The background task started, with run_in_background."`
	Notes           []string `json:"notes,omitempty" jsonschema:"Things the caller should know, such as a clamped timeout."`
	Omitted         []string `json:"omitted,omitempty" jsonschema:"For each stream cut to the budget: how much was left out, the file holding the full text and how to read the rest."`
	Hint            string   `json:"hint,omitempty" jsonschema:"What happened and what to do next, as the text result says it: how to read a background task, why a command was stopped."`
	TTY             bool     `json:"tty,omitempty" jsonschema:"The command ran in a terminal: stdout holds its output and stderr's, as the terminal showed them."`
	Reason          string   `json:"reason,omitempty" jsonschema:"Why a command run in a terminal returned while it still runs: waiting for input, or a full-screen program."`
	Screen          string   `json:"screen,omitempty" jsonschema:"The terminal's screen, for a full-screen program: a line with its size and the cursor, then its lines."`
}

const bashDescription = `Run a shell command or script with /bin/bash (or /bin/sh where bash is missing) and return its exit code, stdout and stderr.

Each call runs a fresh shell with stdin at EOF and no terminal (unless tty is set), in its own process group (git gets GIT_EDITOR=true unless you set it, so give git commit a -m message). The working directory and exported environment variables persist across calls: a ` + "`cd`" + ` or ` + "`export FOO=1`" + ` in one call holds for the next. Shell variables that are not exported, functions, aliases and shell options do not persist.

timeout is in milliseconds (default %d, at most 600000). When it runs out, the whole process group gets SIGTERM and then SIGKILL, and the output captured so far is returned with timed_out set. A call the client cancels is stopped the same way and, as MCP asks, gets no result.

Output budget: %d characters per call, stdout and stderr together. Longer output keeps its head and its tail around a marker that says how much was left out and names the file holding the full output, with the exact follow-up to read the omitted part (view with view_range, or bash with sed -n 'A,Bp' FILE); a "cut:" line at the start and again at the end of the result says the same.

For servers, watchers and other long jobs, set run_in_background: the call returns a task_id at once (timeout does not apply; the task starts in the current working directory, and its cd and export do not persist). Poll it with task_output (only new output each time, optionally waiting for more), stop it with task_kill, see all with task_list. Processes left running with a trailing & end when the session closes.

For interactive programs (REPLs, y/N or password prompts, git add -p, debuggers, vim, less) set tty: the command runs in a 120x30 terminal and, once it waits for input or takes the whole screen, the call returns with its prompt (or its rendered screen) and a task_id; type at it with task_input.

`

// bashConfinement ends the bash description: what confines commands.
func bashConfinement(p *confine.Policy) string {
	if p == nil || !p.Paths() {
		return "Path rules (--allow-dir, --deny-dir) apply to the file tools only; they do not confine bash."
	}
	return "Commands are confined by the kernel (Landlock): they may write only in the allowed directories and $TMPDIR, and read only there and in the system directories the server instructions list; anything else fails with \"Permission denied\"."
}

func addBash(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "bash",
		Description: fmt.Sprintf(bashDescription, h.Config.Timeout.Milliseconds(), h.describedBudget()) + bashConfinement(h.Confine),
		Annotations: &mcp.ToolAnnotations{Title: "Run a shell command", DestructiveHint: new(true), OpenWorldHint: new(true)},
	}, h.bash)
}

func (h *handlers) bash(ctx context.Context, req *mcp.CallToolRequest, in BashArgs) (*mcp.CallToolResult, *BashResult, error) {
	if err := checkBashArgs(in); err != nil {
		return nil, nil, err
	}
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	out := &BashResult{}
	c := session.Command{Script: in.Command, Shell: h.Config.Shell, Fallback: h.Config.Workdir,
		Grace: h.Config.KillGrace, Drain: h.Config.OutputDrain, MaxSpillFile: h.Config.MaxSpillFile, MaxSpillTotal: h.Config.MaxSpillTotal, Hint: h.face().omitted, Budget: h.contentBudget(ctx), Lines: h.budget(ctx).Lines}
	if in.RunInBackground {
		if in.TTY {
			return h.startTTY(ctx, sess, c, out)
		}
		return h.startTask(ctx, sess, c, out)
	}
	c.Timeout = h.Config.Timeout
	if in.Timeout > 0 {
		c.Timeout = time.Duration(in.Timeout) * time.Millisecond
	}
	if c.Timeout > maxTimeout {
		out.Notes = append(out.Notes, fmt.Sprintf("timeout %d ms is above the maximum; used %d ms", in.Timeout, maxTimeout.Milliseconds()))
		c.Timeout = maxTimeout
	}
	if in.TTY {
		return h.bashTTY(ctx, sess, c, out)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopProgress := func() {}
	if tok := req.Params.GetProgressToken(); tok != nil {
		c.OnOutput, stopProgress = h.progress(ctx, req, tok)
	}
	if wc := watch.CallFrom(ctx); wc != nil {
		// The person watching sees the output as it comes, and may stop the command.
		wc.OnStop(func() { cancel(tasks.ErrStoppedByUser) })
		c.OnOutput = teeOutput(c.OnOutput, wc.Output)
	}
	ran, bg, err := h.run(ctx, sess, c)
	stopProgress()
	if err != nil {
		return nil, nil, withCode(CodeFailed, err)
	}
	if bg != nil {
		return h.detached(ctx, sess, bg, h.detachAfter(ctx), c.Timeout, out)
	}
	h.bashResult(ctx, ran, c.Timeout, out)
	return text(formatBash(out)), out, nil
}

// checkBashArgs refuses what the schema cannot.
func checkBashArgs(in BashArgs) error {
	switch {
	case strings.TrimSpace(in.Command) == "":
		return errorf(CodeInvalidArgument, "command is empty: pass the shell command to run")
	case strings.IndexByte(in.Command, 0) >= 0:
		return errorf(CodeInvalidArgument, "command contains a NUL byte, which no shell can be given: remove it (to print one, use printf '\\0')")
	case in.Timeout < 0:
		return errorf(CodeInvalidArgument, "timeout %d is negative: give milliseconds, at most %d", in.Timeout, maxTimeout.Milliseconds())
	}
	return nil
}

// bashResult fills out with how ran ended, in the words the model reads.
func (h *handlers) bashResult(ctx context.Context, ran *session.Ran, timeout time.Duration, out *BashResult) {
	if ran.Moved != nil {
		out.Notes = append(out.Notes, movedNote(ran.Moved))
	}
	if len(ran.TooLarge) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("not kept for later calls: %s, too large to pass to a command (at most 128 KiB a variable, 1 MiB in all); write large values to a file instead", strings.Join(ran.TooLarge, ", ")))
	}
	if ran.ProcessLimit > 0 {
		out.Notes = append(out.Notes, processLimitNote(ran.ProcessLimit))
	} else if ran.Lingering {
		out.Notes = append(out.Notes, "processes the command started are still running in the background; they end when the session closes (use run_in_background to keep track of them)")
	}
	out.ExitCode, out.Signal, out.DurationMS, out.Cwd = &ran.ExitCode, ran.Signal, ran.Duration.Milliseconds(), ran.Cwd
	out.TimeoutMS = timeout.Milliseconds()
	switch {
	case ran.Signal != "":
		setOutcome(ctx, fmt.Sprintf("killed by %s (exit %d)", ran.Signal, ran.ExitCode))
	case ran.ExitCode != 0:
		setOutcome(ctx, fmt.Sprintf("exit %d", ran.ExitCode))
	}
	switch {
	case errors.Is(ran.Stopped, session.ErrTimedOut):
		setOutcome(ctx, "timed_out")
		out.TimedOut = true
		out.Stopped = fmt.Sprintf("timed out after %d ms", timeout.Milliseconds())
		signals := "SIGTERM, then SIGKILL if needed"
		if out.TTY {
			signals = "SIGHUP and SIGTERM, as a terminal's hang-up, then SIGKILL if needed"
		}
		out.Hint = fmt.Sprintf("timed out: the command ran past its %d ms timeout and its process group was stopped (%s); the output captured until then is below", timeout.Milliseconds(), signals)
	case errors.Is(ran.Stopped, session.ErrClosed):
		setOutcome(ctx, "session_closed")
		out.Stopped = "the session closed"
	case errors.Is(ran.Stopped, tasks.ErrStoppedByUser):
		out.Stopped = "stopped by the user"
	case ran.Stopped != nil:
		setOutcome(ctx, "cancelled")
		out.Stopped = "the call was cancelled"
	}
	if out.Stopped != "" && !out.TimedOut {
		out.Hint = fmt.Sprintf("stopped: %s, so the command's process group was stopped; the output captured until then is below", out.Stopped)
	}
	for _, st := range []struct {
		name string
		ex   shell.Excerpt
	}{{"stdout", ran.Stdout}, {"stderr", ran.Stderr}} {
		if st.ex.Replaced {
			out.Notes = append(out.Notes, st.name+" has bytes that are not valid UTF-8, shown as U+FFFD; pipe the command through od -c or xxd to see them")
		}
	}
	out.Stdout, out.StdoutTruncated, out.StdoutFile = ran.Stdout.Text, ran.Stdout.Truncated, ran.Stdout.SpillPath
	out.Stderr, out.StderrTruncated, out.StderrFile = ran.Stderr.Text, ran.Stderr.Truncated, ran.Stderr.SpillPath
	out.Omitted = omitted(ran.Stdout, ran.Stderr)
	if ran.Confined && ran.ExitCode != 0 && (strings.Contains(out.Stderr, permissionDenied) || strings.Contains(out.Stdout, permissionDenied)) {
		out.Notes = append(out.Notes, confinedNote(h.Confine))
	}
}

// processLimitNote says that a command was killed for starting too many processes.
func processLimitNote(limit int) string {
	return fmt.Sprintf("killed: the command hit its process limit (%d processes and threads at once; a fork bomb, or a build with too much parallelism?), so it was killed with everything it started; run fewer processes at once (make -j4, say)", limit)
}

// movedNote says that a command ran somewhere else than the working directory.
func movedNote(m *session.Moved) string {
	return fmt.Sprintf("the working directory %s %s; ran in %s instead", m.From, m.Why, m.To)
}

// permissionDenied is how EACCES reads, as the kernel reports a confined command's
// denied access.
const permissionDenied = "Permission denied"

// confinedNote tells why a confined command may have been denied access.
func confinedNote(p *confine.Policy) string {
	var what []string
	if p.Paths() {
		what = append(what, "it may write only under "+strings.Join(p.Writable(), ", ")+" and $TMPDIR, and read only there and under the system directories the server instructions list")
	}
	if p.Network() {
		what = append(what, "it may not open TCP connections or listen on TCP ports")
	}
	return "the command ran confined by the kernel (Landlock), so \"Permission denied\" may come from that: " + strings.Join(what, "; ")
}

// startTask is bash with run_in_background.
func (h *handlers) startTask(ctx context.Context, sess *session.Session, c session.Command, out *BashResult) (*mcp.CallToolResult, *BashResult, error) {
	tw := watch.CallFrom(ctx).NewTask()
	if tw != nil {
		c.OnOutput = teeOutput(c.OnOutput, tw.Output)
	}
	t, dir, moved, err := sess.Start(c)
	if moved != nil {
		out.Notes = append(out.Notes, movedNote(moved))
	}
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	tw.Started(t.ID, c.Script, func() { _, _ = sess.Tasks.KillCause(t.ID, tasks.ErrStoppedByUser) }, t.Done(), t.Status)
	h.offerTask(ctx, t, 0)
	out.TaskID, out.Cwd = t.ID, dir
	f := h.face()
	out.Hint = fmt.Sprintf("started in the background in %s. Read its output with %s (%s %q%s); stop it with %s.", dir, f.taskOutput, f.taskIDArg, t.ID, f.waitHint, f.taskKill)
	var b strings.Builder
	for _, n := range out.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "%s: %s\n%s\n", f.taskIDArg, t.ID, out.Hint)
	return text(b.String()), out, nil
}

// teeOutput passes output to f, then to w.
func teeOutput(f shell.OutputFunc, w func(int, []byte)) shell.OutputFunc {
	return func(s shell.Stream, p []byte) {
		if f != nil {
			f(s, p)
		}
		w(int(s), p)
	}
}

// progress streams a command's output lines, as the returned OutputFunc sees them, to
// the client as progress notifications. Commands that end within progressDelay send
// none. After that a ticker sends the newest lines at most once every progressInterval,
// each message capped at progressMaxBytes (the newest lines, with a count of those
// skipped). A command that prints nothing for progressQuiet gets a notification saying
// it still runs, so that a client whose wait restarts with each notification (as the
// TypeScript SDK's can, after 60 s by default) keeps waiting for a long, silent
// command. Nothing is sent once the command has exited, and the returned stop function,
// called then, holds the result back until progressGuard has passed since the last
// notification: a client that gets a notification just before the result may take it
// for a broken connection.
func (h *handlers) progress(ctx context.Context, req *mcp.CallToolRequest, tok any) (shell.OutputFunc, func()) {
	delay := cmp.Or(h.Config.ProgressDelay, progressDelay)
	every := cmp.Or(h.Config.ProgressInterval, progressInterval)
	quiet := cmp.Or(h.Config.ProgressQuiet, progressQuiet)
	started := time.Now()
	// One gatherer per stream, so that a partial line on one is not joined to the other's.
	lines := [2]*shell.Lines{shell.NewLines(progressMaxBytes / 2), shell.NewLines(progressMaxBytes / 2)}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var lastSent time.Time // written by the goroutine, read after wg.Wait
	sent := 0
	send := func() {
		out, ok1 := lines[shell.Stdout].Take()
		errs, ok2 := lines[shell.Stderr].Take()
		msg := out + errs
		if !ok1 && !ok2 {
			if time.Since(cmp.Or(lastSent, started)) < quiet {
				return
			}
			msg = fmt.Sprintf("(still running after %s; no new output)", time.Since(started).Round(time.Second))
		}
		select {
		case <-done:
			return // the command has exited: the result is next
		default:
		}
		sent++
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(sent), Message: msg})
		lastSent = time.Now()
	}
	wg.Go(func() {
		first := time.NewTimer(delay)
		defer first.Stop()
		select {
		case <-first.C:
		case <-done:
			return
		}
		send()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				send()
			case <-done:
				return
			}
		}
	})
	return func(s shell.Stream, p []byte) { lines[s].Write(p) }, func() {
		close(done)
		wg.Wait()
		holdBack(ctx, lastSent)
	}
}

// stillWaiting sends a progress notification every progressQuiet while a call waits,
// saying so, until the returned stop function is called; stop then holds the result back
// as [holdBack] does. A client whose wait restarts with each notification keeps waiting.
func (h *handlers) stillWaiting(ctx context.Context, req *mcp.CallToolRequest, tok any) (stop func()) {
	quiet := cmp.Or(h.Config.ProgressQuiet, progressQuiet)
	started := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var lastSent time.Time // written by the goroutine, read after wg.Wait
	wg.Go(func() {
		tick := time.NewTicker(quiet)
		defer tick.Stop()
		for sent := 1; ; sent++ {
			select {
			case <-tick.C:
			case <-done:
				return
			}
			msg := fmt.Sprintf("(still waiting after %s)", time.Since(started).Round(time.Second))
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(sent), Message: msg})
			lastSent = time.Now()
		}
	})
	return func() {
		close(done)
		wg.Wait()
		holdBack(ctx, lastSent)
	}
}

// holdBack waits until progressGuard has passed since the last progress notification,
// if one was sent, or until ctx is done.
func holdBack(ctx context.Context, lastSent time.Time) {
	if lastSent.IsZero() {
		return
	}
	if wait := progressGuard - time.Since(lastSent); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// formatBash writes the flat result text: exit_code, notes, then the stdout and stderr
// blocks that are not empty.
func formatBash(r *BashResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d\n", *r.ExitCode)
	if r.Signal != "" {
		fmt.Fprintf(&b, "signal: %s\n", r.Signal)
	}
	if r.Hint != "" {
		b.WriteString(r.Hint + "\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if r.TTY {
		writeTTYStreams(&b, r.Stdout, r.Screen, r.Omitted)
		return b.String()
	}
	writeStreams(&b, r.Stdout, r.Stderr, r.Omitted)
	return b.String()
}

// omitted says, for each stream an excerpt cut, what was left out and how to read it.
func omitted(stdout, stderr shell.Excerpt) []string {
	var notes []string
	for _, st := range []struct {
		name string
		ex   shell.Excerpt
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if st.ex.Truncated && st.ex.Note != "" {
			notes = append(notes, st.name+": "+st.ex.Note)
		}
	}
	return notes
}

// writeStreams writes the stdout and stderr blocks of a command's result, leaving out
// those that are empty, between two copies of the cut notes (see [bothEnds]). When both
// streams are there each block also ends with a label, so that what follows a cut in the
// middle of the result still reads as the stream it belongs to.
func writeStreams(b *strings.Builder, stdout, stderr string, cut []string) {
	var notes []string
	for _, n := range cut {
		notes = append(notes, "cut: "+n)
	}
	both := stdout != "" && stderr != ""
	bothEnds(b, notes, func(b *strings.Builder) {
		for _, blk := range []struct{ name, s string }{{"stdout", stdout}, {"stderr", stderr}} {
			if blk.s == "" {
				continue
			}
			fmt.Fprintf(b, "%s:\n%s", blk.name, blk.s)
			if !strings.HasSuffix(blk.s, "\n") {
				b.WriteByte('\n')
			}
			if both {
				fmt.Fprintf(b, "[end of %s]\n", blk.name)
			}
		}
	})
}
