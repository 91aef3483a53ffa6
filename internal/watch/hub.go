package watch

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHistory is how many events the ring keeps: enough for a page opened late to show
// the last 250 calls or so (a call is two events while nobody watches), while the whole
// ring (at most 16 KB of text per event, about 150 kB for the events themselves) stays far
// from what the server itself needs.
const DefaultHistory = 512

// Event kinds.
const (
	KindSession    = "session"     // a client session opened
	KindSessionEnd = "session_end" // it closed
	KindCall       = "call"        // a tool call started
	KindCallEnd    = "call_end"    // it returned
	KindOutput     = "output"      // output of a running command or task
	KindTask       = "task"        // a background task started
	KindTaskEnd    = "task_end"    // it ended
	KindDropped    = "dropped"     // this subscriber missed Count events
	// KindCheckpoint: changes made between calls (by a background task, an editor, the
	// user) were found as a call started, and recorded as a checkpoint of their own.
	KindCheckpoint = "checkpoint"
	// KindIndex: a search index of a tree (Cwd) is ready; Files is how many files it
	// holds and Summary says how big it is.
	KindIndex = "index"
)

// Event is one thing that happened. Only the fields its kind needs are set.
type Event struct {
	ID   uint64    `json:"id"`
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	// Session is a short label of the session, made by [Hub.Publish] from the session id
	// it is given: it tells sessions apart, and cannot be used to act as one.
	Session string `json:"session,omitempty"`

	// Sessions.
	Client    string `json:"client,omitempty"`
	Version   string `json:"version,omitempty"`
	Transport string `json:"transport,omitempty"`
	Cwd       string `json:"cwd,omitempty"`

	// Calls and tasks.
	Call       uint64 `json:"call,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Args       string `json:"args,omitempty"`
	Task       string `json:"task,omitempty"`
	Stop       string `json:"stop,omitempty"` // key to POST to /watch/stop while it runs
	Outcome    string `json:"outcome,omitempty"`
	Error      bool   `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	Diff       string `json:"diff,omitempty"`
	Summary    string `json:"summary,omitempty"`
	// Checkpoint names the state just before the call ran, when the call changed files
	// (for a rewind, the rescue checkpoint that undoes it); Files is how many it changed.
	Checkpoint string `json:"checkpoint,omitempty"`
	Files      int    `json:"files,omitempty"`

	// Output.
	Stream string `json:"stream,omitempty"` // stdout or stderr
	Text   string `json:"text,omitempty"`

	Count uint64 `json:"count,omitempty"` // dropped events
}

// Hub is the event stream. The zero value is not usable; see [NewHub].
type Hub struct {
	redact string // replaced by [token] in every text published
	label  []byte // key of the HMAC that turns a session id into its label
	size   int
	subs   atomic.Int32
	calls  atomic.Uint64
	now    func() time.Time

	mu       sync.Mutex
	ring     []Event
	next     uint64        // id of the next event; ids start at 1
	wake     chan struct{} // closed at the next publish, if waiting
	waiting  bool
	closed   chan struct{}    // closed by Close: streams end
	sessions map[string]Event // live sessions, latest state
	stops    map[string]func()
}

// Options configure a Hub.
type Options struct {
	History int    // events kept; DefaultHistory if 0
	Redact  string // a secret (the bearer token) never to show
}

// NewHub returns an empty Hub.
func NewHub(o Options) *Hub {
	if o.History <= 0 {
		o.History = DefaultHistory
	}
	return &Hub{
		redact:   o.Redact,
		label:    []byte(rand.Text()),
		size:     o.History,
		now:      time.Now,
		ring:     make([]Event, 0, min(o.History, 256)),
		next:     1,
		wake:     make(chan struct{}),
		closed:   make(chan struct{}),
		sessions: map[string]Event{},
		stops:    map[string]func(){},
	}
}

// Close ends every stream being served, so that a server can shut down without waiting
// for watchers. Publishing still works.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.closed:
	default:
		close(h.closed)
	}
}

// Closed returns a channel closed by [Hub.Close].
func (h *Hub) Closed() <-chan struct{} { return h.closed }

// Watching reports whether anyone follows the stream now.
func (h *Hub) Watching() bool { return h != nil && h.subs.Load() > 0 }

// Publish adds e to the stream, setting its ID and time, and returns the ID.
func (h *Hub) Publish(e Event) uint64 {
	if h == nil {
		return 0
	}
	e.Session = h.sessionLabel(e.Session)
	e.Args, e.Text, e.Diff, e.Outcome, e.Summary, e.Cwd = h.clean(e.Args), h.clean(e.Text), h.clean(e.Diff), h.clean(e.Outcome), h.clean(e.Summary), h.clean(e.Cwd)
	if e.Time.IsZero() {
		e.Time = h.now()
	}
	h.mu.Lock()
	e.ID = h.next
	h.next++
	if len(h.ring) < h.size {
		h.ring = append(h.ring, e)
	} else {
		h.ring[int((e.ID-1)%uint64(h.size))] = e
	}
	switch e.Kind {
	case KindSession:
		h.sessions[e.Session] = e
	case KindSessionEnd:
		delete(h.sessions, e.Session)
	case KindCallEnd:
		if s, ok := h.sessions[e.Session]; ok && e.Cwd != "" {
			s.Cwd = e.Cwd
			h.sessions[e.Session] = s
		}
	}
	if h.waiting {
		close(h.wake)
		h.wake = make(chan struct{})
		h.waiting = false
	}
	h.mu.Unlock()
	return e.ID
}

// sessionLabel returns the label the live view shows for the session id: "s" and 7 hex
// digits of a keyed hash (eight characters, as much as the page and `boris watch` show), so that watchers (a command of another session among them, where
// they can reach the page) never see an id that a client presents to act as the session.
func (h *Hub) sessionLabel(id string) string {
	if id == "" {
		return ""
	}
	mac := hmac.New(sha256.New, h.label)
	mac.Write([]byte(id))
	return "s" + hex.EncodeToString(mac.Sum(nil)[:4])[:7]
}

func (h *Hub) clean(s string) string {
	if h.redact == "" || s == "" {
		return s
	}
	return strings.ReplaceAll(s, h.redact, "[token]")
}

// Subscription is one follower's place in the stream.
type Subscription struct {
	h    *Hub
	next uint64 // the next event to hand out
	once sync.Once
}

// Subscribe starts following the stream after event id last: 0 for all the history kept.
// Close the subscription when done.
func (h *Hub) Subscribe(last uint64) *Subscription {
	h.subs.Add(1)
	return &Subscription{h: h, next: last + 1}
}

// Close ends the subscription.
func (s *Subscription) Close() { s.once.Do(func() { s.h.subs.Add(-1) }) }

// Next returns the events after the last ones returned, at most max of them, or nil and
// a channel closed when there are more. Events that were pushed out of the ring before
// this subscriber read them are reported first as one [KindDropped] event.
func (s *Subscription) Next(max int) ([]Event, <-chan struct{}) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.next >= h.next {
		h.waiting = true
		return nil, h.wake
	}
	var out []Event
	oldest := h.next - uint64(len(h.ring))
	if s.next < oldest {
		if s.next > 1 || oldest > 1 {
			out = append(out, Event{Kind: KindDropped, Count: oldest - s.next, Time: h.now()})
		}
		s.next = oldest
	}
	for s.next < h.next && len(out) < max {
		out = append(out, h.ring[int((s.next-1)%uint64(h.size))])
		s.next++
	}
	return out, nil
}

// Sessions returns the live sessions as their latest session events, oldest first.
func (h *Hub) Sessions() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Event, 0, len(h.sessions))
	for _, e := range h.sessions {
		out = append(out, e)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ID < out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// stoppable registers f as the way to stop what key names, until the returned function
// is called.
func (h *Hub) stoppable(key string, f func()) func() {
	h.mu.Lock()
	h.stops[key] = f
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.stops, key)
		h.mu.Unlock()
	}
}

// Stop stops the running command or task key names, as the person watching asked. It
// reports whether there was one; the stop itself goes on in the background.
func (h *Hub) Stop(key string) bool {
	h.mu.Lock()
	f, ok := h.stops[key]
	delete(h.stops, key)
	h.mu.Unlock()
	if ok {
		go f()
	}
	return ok
}
