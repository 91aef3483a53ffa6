package watch

import (
	"context"
	"crypto/rand"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Output gathering: chunks are coalesced and published at most this often per stream,
// and at most maxChunk bytes per event, keeping the tail when more arrived.
const (
	flushInterval = 100 * time.Millisecond
	maxChunk      = 16 << 10
)

type ctxKey struct{}

// Call is a tool call in progress, as the handler sees it through its context.
type Call struct {
	hub     *Hub
	id      uint64
	session string
	stopKey string
	out     *output

	result any // the handler's structured result, whether or not the client gets it

	checkpoint string // the checkpoint the call made, if it changed files
	files      int

	mu      sync.Mutex
	release func()
}

// WithCall returns ctx carrying c, for the tool handler.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// CallFrom returns the call ctx carries, or nil when nothing is published (the watch is
// off). Every method of a nil *Call does nothing.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(ctxKey{}).(*Call)
	return c
}

// Output takes a chunk of the command's output (stream 0 stdout, 1 stderr), from the
// goroutine reading that stream. It does nothing while nobody watches.
func (c *Call) Output(stream int, p []byte) {
	if c != nil {
		c.out.write(stream, p)
	}
}

// SetResult records the handler's structured result, which the call's end is described
// from (exit status, timed out, task status) even when the client is sent text only. It is
// called from the handler's goroutine, before the call returns.
func (c *Call) SetResult(v any) {
	if c != nil {
		c.result = v
	}
}

// SetCheckpoint records the checkpoint the call made (its id, and how many files it
// changed), which its end shows and which the person watching may rewind to. It is called
// from the handler's goroutine, before the call returns.
func (c *Call) SetCheckpoint(id string, files int) {
	if c != nil {
		c.checkpoint, c.files = id, files
	}
}

// BetweenCalls shows the checkpoint of changes made between calls (its id, and how many
// files they changed), found as this call started, as an event of its own: the person
// watching may rewind to it as to a call's.
func (c *Call) BetweenCalls(id string, files int) {
	if c != nil {
		c.hub.Publish(Event{Kind: KindCheckpoint, Session: c.session, Call: c.id, Checkpoint: id, Files: files, Summary: "changes made between calls"})
	}
}

// OnStop lets the person watching stop the call: f must make the handler return soon,
// with a result that says the user stopped it. It holds until the call returns.
func (c *Call) OnStop(f func()) {
	if c == nil {
		return
	}
	rel := c.hub.stoppable(c.stopKey, f)
	c.mu.Lock()
	c.release = rel
	c.mu.Unlock()
}

// finish sends the output still gathered and stops accepting stop requests.
func (c *Call) finish() {
	c.out.close()
	c.mu.Lock()
	rel := c.release
	c.release = nil
	c.mu.Unlock()
	if rel != nil {
		rel()
	}
}

// TaskWatch follows a background task started by a call.
type TaskWatch struct {
	call *Call
	out  *output
}

// NewTask prepares to follow a background task this call is about to start: give its
// Output method the task's output, then call Started once the task runs.
func (c *Call) NewTask() *TaskWatch {
	if c == nil {
		return nil
	}
	return &TaskWatch{call: c, out: &output{hub: c.hub, session: c.session, call: c.id}}
}

// Output takes a chunk of the task's output.
func (tw *TaskWatch) Output(stream int, p []byte) {
	if tw != nil {
		tw.out.write(stream, p)
	}
}

// Started publishes the task: id and command name it, stop stops it (as the user), done
// is closed when it has ended, and status then says how.
func (tw *TaskWatch) Started(id, command string, stop func(), done <-chan struct{}, status func() string) {
	if tw == nil {
		return
	}
	h := tw.call.hub
	key := rand.Text() // unguessable: the stop action takes it from those who see the page
	tw.out.mu.Lock()
	tw.out.task = id
	tw.out.mu.Unlock()
	release := h.stoppable(key, stop)
	h.Publish(Event{Kind: KindTask, Session: tw.call.session, Call: tw.call.id, Task: id, Args: command, Stop: key})
	started := h.now()
	go func() {
		<-done
		release()
		tw.out.close()
		h.Publish(Event{Kind: KindTaskEnd, Session: tw.call.session, Call: tw.call.id, Task: id, Outcome: status(), DurationMS: h.now().Sub(started).Milliseconds()})
	}()
}

// output coalesces a command's output into events.
type output struct {
	hub     *Hub
	session string
	call    uint64

	mu        sync.Mutex
	task      string
	buf       [2][]byte
	skipped   [2]int
	scheduled bool
	closed    bool
}

func (o *output) write(stream int, p []byte) {
	if o == nil || len(p) == 0 || stream < 0 || stream > 1 || !o.hub.Watching() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	b := append(o.buf[stream], p...)
	if over := len(b) - maxChunk; over > 0 {
		// Keep the tail: that is where a failing build says why.
		for over < len(b) && !utf8.RuneStart(b[over]) {
			over++
		}
		o.skipped[stream] += over
		b = append(b[:0], b[over:]...)
	}
	o.buf[stream] = b
	if !o.scheduled {
		o.scheduled = true
		time.AfterFunc(flushInterval, func() { o.flush(false) })
	}
}

func (o *output) close() {
	if o == nil {
		return
	}
	o.flush(true)
}

// flush publishes what was gathered; unless final, an incomplete character at the end
// waits for the rest.
func (o *output) flush(final bool) {
	// Published under the lock, so that a timer's flush and the final one stay in order.
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.scheduled = false
	o.closed = final
	for s := range o.buf {
		b := o.buf[s]
		keep := 0
		if !final {
			keep = incomplete(b)
		}
		if len(b)-keep == 0 && o.skipped[s] == 0 {
			continue
		}
		text := ""
		if o.skipped[s] > 0 {
			text = "[… " + strconv.Itoa(o.skipped[s]) + " bytes skipped …]\n"
			o.skipped[s] = 0
		}
		text += string(b[:len(b)-keep])
		o.buf[s] = append(b[:0], b[len(b)-keep:]...)
		o.hub.Publish(Event{Kind: KindOutput, Session: o.session, Call: o.call, Task: o.task, Stream: streamNames[s], Text: text})
	}
	if !final && (len(o.buf[0]) > 0 || len(o.buf[1]) > 0) {
		o.scheduled = true
		time.AfterFunc(flushInterval, func() { o.flush(false) })
	}
}

var streamNames = [2]string{"stdout", "stderr"}

// incomplete returns how many bytes at the end of b are the start of a character whose
// rest has not arrived.
func incomplete(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}
