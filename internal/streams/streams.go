// Package streams bounds long-lived HTTP responses (event streams): how many are open at
// once, and how long one write may wait for a client that does not read.
//
// A client that stops reading leaves its stream's writes blocked once the kernel's socket
// buffers fill, with what was being written held in memory; thousands of such clients
// would hold the server's memory hostage. A [Limit] admits at most its maximum of streams:
// when full, a new one takes the place of the stream whose write has been blocked the
// longest (the slowest reader), and when none is blocked the new one is refused. Every
// write is given a deadline, so a stalled reader is dropped within it in any case.
package streams

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// ErrDropped is what writes to a stream return once it was dropped to make room.
var ErrDropped = errors.New("stream dropped: too many streams, and this client read the slowest")

// Limit admits streams. The zero value is not usable; see [New].
type Limit struct {
	max     int
	timeout time.Duration
	stall   time.Duration // how long a write must have waited for its stream to count as stalled
	now     func() time.Time

	mu   sync.Mutex
	open map[*Stream]struct{}
}

// New returns a Limit of max streams at once, each write waiting at most timeout (no
// deadline when 0).
func New(max int, timeout time.Duration) *Limit {
	return &Limit{max: max, timeout: timeout, stall: time.Second, now: time.Now, open: map[*Stream]struct{}{}}
}

// Open admits a stream written to w, dropping the slowest open stream if the Limit is full.
// It returns nil when full with none blocked to drop: answer 503 then. Close the stream
// when the response ends.
func (l *Limit) Open(w http.ResponseWriter) *Stream {
	s := &Stream{rw: w, rc: http.NewResponseController(w), l: l, dropped: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.open) >= l.max {
		victim := l.slowestLocked()
		if victim == nil {
			return nil
		}
		delete(l.open, victim)
		victim.drop()
	}
	l.open[s] = struct{}{}
	return s
}

// Len returns how many streams are open.
func (l *Limit) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

// slowestLocked returns the open stream whose write has been blocked the longest, or nil
// if none has been blocked for l.stall. l.mu must be held.
func (l *Limit) slowestLocked() *Stream {
	var victim *Stream
	since := l.now().Add(-l.stall)
	for s := range l.open {
		s.mu.Lock()
		b := s.blocked
		s.mu.Unlock()
		if !b.IsZero() && !b.After(since) && (victim == nil || b.Before(since)) {
			victim, since = s, b
		}
	}
	return victim
}

// Stream is one admitted response. It is an http.ResponseWriter whose writes and flushes
// have a deadline and fail once the stream is dropped; use it in place of the writer
// given to [Limit.Open].
type Stream struct {
	rw      http.ResponseWriter
	rc      *http.ResponseController
	l       *Limit
	dropped chan struct{}
	once    sync.Once

	mu      sync.Mutex
	blocked time.Time // when the write under way began; zero outside writes
}

// Dropped is closed when the stream is dropped to make room for another.
func (s *Stream) Dropped() <-chan struct{} { return s.dropped }

// drop ends the stream: a write under way fails at once, and so do later ones.
func (s *Stream) drop() {
	s.once.Do(func() {
		close(s.dropped)
		_ = s.rc.SetWriteDeadline(time.Unix(1, 0))
	})
}

// Close forgets the stream, and clears the deadline its writes set, which would else
// hold for the next response on the connection. It is safe to call more than once.
func (s *Stream) Close() {
	s.l.mu.Lock()
	delete(s.l.open, s)
	s.l.mu.Unlock()
	select {
	case <-s.dropped:
	default:
		if s.l.timeout > 0 {
			_ = s.rc.SetWriteDeadline(time.Time{})
		}
	}
}

// Header returns the response's header.
func (s *Stream) Header() http.Header { return s.rw.Header() }

// WriteHeader sends the status line.
func (s *Stream) WriteHeader(code int) { s.rw.WriteHeader(code) }

// Write writes b within the Limit's deadline.
func (s *Stream) Write(b []byte) (int, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	return s.rw.Write(b)
}

// Flush sends what is buffered within the Limit's deadline; http.ResponseController and
// http.Flusher reach it.
func (s *Stream) FlushError() error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	return s.rc.Flush()
}

// Flush is FlushError without its error, for http.Flusher.
func (s *Stream) Flush() { _ = s.FlushError() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *Stream) Unwrap() http.ResponseWriter { return s.rw }

func (s *Stream) begin() error {
	select {
	case <-s.dropped:
		return ErrDropped
	default:
	}
	now := s.l.now()
	s.mu.Lock()
	s.blocked = now
	s.mu.Unlock()
	if s.l.timeout > 0 {
		// A deadline set after a drop would undo it: drop sets its own under once, and
		// a write that began just before sees it fail or finish.
		_ = s.rc.SetWriteDeadline(now.Add(s.l.timeout))
		select {
		case <-s.dropped:
			_ = s.rc.SetWriteDeadline(time.Unix(1, 0))
		default:
		}
	}
	return nil
}

func (s *Stream) end() {
	s.mu.Lock()
	s.blocked = time.Time{}
	s.mu.Unlock()
}
