package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/tasks"
)

// maxWait bounds how long task_output may block.
const maxWait = 600_000 * time.Millisecond

// TaskOutputArgs are task_output's parameters.
type TaskOutputArgs struct {
	TaskID string `json:"task_id" jsonschema:"The task_id returned by bash with run_in_background."`
	WaitMS int    `json:"wait_ms,omitempty" jsonschema:"If there is no new output yet, wait up to this many milliseconds for some, or for the task to end (default 0: return at once; at most 600000)."`
	Until  string `json:"until,omitempty" jsonschema:"A regular expression (RE2, such as 'Listening on|error'): wait until a line of new output matches it or the task ends, up to wait_ms (default: the bash timeout), and show the matching line first."`
	Screen bool   `json:"screen,omitempty" jsonschema:"For a task started with tty: true, also return its terminal's screen as text, with the cursor position (a full-screen program's screen is always returned)."`
}

// TaskIDArgs name one task.
type TaskIDArgs struct {
	TaskID string `json:"task_id" jsonschema:"The task_id returned by bash with run_in_background."`
}

// TaskListArgs are task_list's parameters: none.
type TaskListArgs struct{}

// TaskResult is the structured form of task_output and task_kill.
type TaskResult struct {
	TaskID          string   `json:"task_id,omitempty" jsonschema:"The task."`
	Status          string   `json:"status,omitempty" jsonschema:"running, exited N, or killed by SIGNAL with the reason."`
	Running         bool     `json:"running,omitempty" jsonschema:"The task is still running."`
	ExitCode        *int     `json:"exit_code,omitempty" jsonschema:"Exit status once the task has ended; 128+n when killed by signal n."`
	Signal          string   `json:"signal,omitempty" jsonschema:"The signal that killed the task, if any."`
	DurationMS      int64    `json:"duration_ms,omitempty" jsonschema:"How long the task has run, in milliseconds."`
	Stdout          string   `json:"stdout,omitempty" jsonschema:"Standard output written since the previous read, within the budget."`
	Stderr          string   `json:"stderr,omitempty" jsonschema:"Standard error written since the previous read, within the budget."`
	StdoutTruncated bool     `json:"stdout_truncated,omitempty" jsonschema:"The new standard output was longer than the budget."`
	StderrTruncated bool     `json:"stderr_truncated,omitempty" jsonschema:"The new standard error was longer than the budget."`
	StdoutFile      string   `json:"stdout_file,omitempty" jsonschema:"File holding the task's full standard output, when truncated."`
	StderrFile      string   `json:"stderr_file,omitempty" jsonschema:"File holding the task's full standard error, when truncated."`
	Omitted         []string `json:"omitted,omitempty" jsonschema:"For each stream cut to the budget: how much was left out, the file holding the full text and how to read the rest."`
	Hint            string   `json:"hint,omitempty" jsonschema:"What the text result says besides the output, such as that there was no new output since the previous read."`
	TTY             bool     `json:"tty,omitempty" jsonschema:"The task runs in a terminal: stdout holds its output and stderr's, as the terminal showed them."`
	Reason          string   `json:"reason,omitempty" jsonschema:"For a terminal task still running: why the call returned (waiting for input, full-screen program, still busy)."`
	Screen          string   `json:"screen,omitempty" jsonschema:"The terminal's screen: a line with its size and the cursor, then its lines."`
}

// TaskListResult is task_list's structured result.
type TaskListResult struct {
	Tasks []TaskInfo `json:"tasks,omitempty" jsonschema:"The session's background tasks, oldest first; absent when there are none."`
	Hint  string     `json:"hint,omitempty" jsonschema:"What the text result says when there are no tasks."`
}

// TaskInfo describes one task in task_list.
type TaskInfo struct {
	TaskID     string `json:"task_id"`
	Command    string `json:"command"`
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
}

func addTaskOutput(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "task_output",
		Description: fmt.Sprintf(`Read a background task's status (running, exited N, or killed) and the output it wrote since the previous task_output call for that task, so polling never repeats output.

Set wait_ms to block until new output arrives or the task ends, instead of polling in a tight loop; set until to a regular expression to wait for a line that matches it (such as until 'Listening on|error' after starting a server), which is shown first. The new output has a budget of %d characters, stdout and stderr together; past it the head and tail are shown with a marker naming the file that holds the full output, and a "cut:" line at the start and at the end of the result says the same. Finished tasks are kept for a while after they end, then forgotten.`, h.describedBudget()),
		Annotations: &mcp.ToolAnnotations{Title: "Read a background task's output", ReadOnlyHint: true},
	}, h.taskOutput)
}

func addTaskKill(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "task_kill",
		Description: `Stop a background task started by bash with run_in_background: its whole process group gets SIGTERM, then SIGKILL after a grace period. Returns its final status and any output not yet read. Killing a task that already ended is not an error.`,
		Annotations: &mcp.ToolAnnotations{Title: "Stop a background task", DestructiveHint: new(true)},
	}, h.taskKill)
}

func addTaskList(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "task_list",
		Description: `List this session's background tasks with their command, status and running time. Tasks end when the session closes.`,
		Annotations: &mcp.ToolAnnotations{Title: "List background tasks", ReadOnlyHint: true},
	}, h.taskList)
}

func (h *handlers) taskOutput(ctx context.Context, req *mcp.CallToolRequest, in TaskOutputArgs) (*mcp.CallToolResult, *TaskResult, error) {
	if in.WaitMS < 0 {
		return nil, nil, errorf(CodeInvalidArgument, "wait_ms %d is negative: give milliseconds, at most %d", in.WaitMS, maxWait.Milliseconds())
	}
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	in.TaskID = localTaskID(in.TaskID)
	wait := h.boundWait(ctx, time.Duration(in.WaitMS)*time.Millisecond, in.Until != "")
	if tok := req.Params.GetProgressToken(); tok != nil && wait > 0 {
		defer h.stillWaiting(ctx, req, tok)()
	}
	if in.Until != "" {
		return h.readUntil(ctx, sess, in.TaskID, in.Until, wait)
	}
	return h.readTask(ctx, sess, in.TaskID, wait, in.Screen, h.contentBudget(ctx))
}

func (h *handlers) taskKill(ctx context.Context, req *mcp.CallToolRequest, in TaskIDArgs) (*mcp.CallToolResult, *TaskResult, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	in.TaskID = localTaskID(in.TaskID)
	if _, err := sess.Tasks.Kill(in.TaskID); err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	return h.readTask(ctx, sess, in.TaskID, 0, false, h.contentBudget(ctx))
}

// readTask is the result of reading task id's new output, waiting up to wait for some,
// within budget characters; with screen, a terminal task's screen too.
func (h *handlers) readTask(ctx context.Context, sess *session.Session, id string, wait time.Duration, screen bool, budget int) (*mcp.CallToolResult, *TaskResult, error) {
	if screen {
		if _, err := sess.Tasks.Screen(id); err != nil {
			return nil, nil, h.ttyError(err, sess)
		}
	}
	snap, err := sess.Tasks.Output(ctx, id, wait, budget, h.face().omitted)
	if err != nil {
		return nil, nil, taskError(err, sess, h.face())
	}
	if snap.Task.TTY() {
		sn, err := sess.Tasks.Screen(id)
		if err != nil {
			return nil, nil, h.ttyError(err, sess)
		}
		out := ttyTaskResult(tasks.Exchange{Snapshot: snap, Screen: sn, Why: tasks.WhyExited}, wait, screen)
		return text(formatTask(out)), out, nil
	}
	out := taskResult(snap)
	return text(formatTask(out)), out, nil
}

func (h *handlers) taskList(_ context.Context, req *mcp.CallToolRequest, _ TaskListArgs) (*mcp.CallToolResult, *TaskListResult, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	out := &TaskListResult{}
	var b strings.Builder
	for _, t := range sess.Tasks.List() {
		info := TaskInfo{TaskID: t.ID, Command: t.Command, Status: t.Status(), DurationMS: taskDuration(t).Milliseconds()}
		out.Tasks = append(out.Tasks, info)
		fmt.Fprintf(&b, "%s  %s  %s  %s\n", info.TaskID, info.Status, time.Duration(info.DurationMS)*time.Millisecond, oneLine(info.Command))
	}
	if len(out.Tasks) == 0 {
		out.Hint = "no background tasks in this session"
		b.WriteString(out.Hint + "\n")
	}
	return text(b.String()), out, nil
}

func taskDuration(t *tasks.Task) time.Duration {
	if res, ok := t.Result(); ok {
		return res.Duration
	}
	return time.Since(t.Started)
}

func taskResult(snap tasks.Snapshot) *TaskResult {
	t := snap.Task
	out := &TaskResult{TaskID: t.ID, Status: snap.Status, Running: snap.Running, DurationMS: taskDuration(t).Milliseconds()}
	if res, ok := t.Result(); ok && !snap.Running {
		out.ExitCode, out.Signal = &res.ExitCode, res.Signal
	}
	out.Stdout, out.StdoutTruncated, out.StdoutFile = snap.Stdout.Text, snap.Stdout.Truncated, snap.Stdout.SpillPath
	out.Stderr, out.StderrTruncated, out.StderrFile = snap.Stderr.Text, snap.Stderr.Truncated, snap.Stderr.SpillPath
	out.Omitted = omitted(snap.Stdout, snap.Stderr)
	if out.Stdout == "" && out.Stderr == "" {
		out.Hint = noNewOutput
	}
	return out
}

// noNewOutput is the hint of a task read that found nothing new.
const noNewOutput = "(no new output)"

func formatTask(r *TaskResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task_id: %s\nstatus: %s", r.TaskID, r.Status)
	if r.Running && r.Reason != "" {
		b.WriteString(", " + r.Reason)
	}
	b.WriteByte('\n')
	if r.ExitCode != nil {
		fmt.Fprintf(&b, "exit_code: %d\n", *r.ExitCode)
	}
	if r.Hint != "" {
		b.WriteString(r.Hint + "\n")
	}
	if r.TTY {
		writeTTYStreams(&b, r.Stdout, r.Screen, r.Omitted)
		return b.String()
	}
	writeStreams(&b, r.Stdout, r.Stderr, r.Omitted)
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}
