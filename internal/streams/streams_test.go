package streams

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// stuck is a response writer whose writes wait until released, as a write to a client
// that reads nothing does.
type stuck struct {
	*httptest.ResponseRecorder
	entered chan struct{}
	release chan struct{}
}

func newStuck() *stuck {
	return &stuck{httptest.NewRecorder(), make(chan struct{}), make(chan struct{})}
}

func (s *stuck) Write(b []byte) (int, error) {
	close(s.entered)
	<-s.release
	return len(b), nil
}

// TestSlowestDropped: a full Limit refuses a new stream while none of its streams is stuck
// in a write, and drops the one stuck the longest when some are.
func TestSlowestDropped(t *testing.T) {
	t.Parallel()
	l := New(3, 0)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	idle := l.Open(httptest.NewRecorder())
	ws := []*stuck{newStuck(), newStuck()}
	var st []*Stream
	for _, w := range ws {
		st = append(st, l.Open(w))
	}
	if l.Open(httptest.NewRecorder()) != nil {
		t.Fatal("a full Limit admitted a stream while none was stuck")
	}
	done := make(chan struct{})
	for i, s := range st {
		go func() {
			defer func() { done <- struct{}{} }()
			_, _ = s.Write([]byte("x"))
		}()
		<-ws[i].entered
		now = now.Add(time.Second) // the first is stuck a second longer
	}
	now = now.Add(time.Second)
	if got := l.Open(httptest.NewRecorder()); got == nil {
		t.Fatal("a full Limit refused a stream with two stuck")
	}
	select {
	case <-st[0].Dropped():
	default:
		t.Error("the stream stuck the longest was not dropped")
	}
	for _, s := range []*Stream{idle, st[1]} {
		select {
		case <-s.Dropped():
			t.Error("another stream than the slowest was dropped")
		default:
		}
	}
	if _, err := st[0].Write([]byte("y")); err != ErrDropped {
		t.Errorf("a write to a dropped stream = %v, want ErrDropped", err)
	}
	for _, w := range ws {
		close(w.release)
		<-done
	}
	if l.Len() != 3 {
		t.Errorf("%d streams open, want 3", l.Len())
	}
}

// TestStallThreshold: a write under way for less than the stall time does not make its
// stream the one to drop.
func TestStallThreshold(t *testing.T) {
	t.Parallel()
	l := New(1, 0)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	w := newStuck()
	s := l.Open(w)
	go func() { _, _ = s.Write([]byte("x")) }()
	<-w.entered
	now = now.Add(l.stall / 2)
	if l.Open(httptest.NewRecorder()) != nil {
		t.Error("a stream in a short write was dropped")
	}
	now = now.Add(l.stall)
	if l.Open(httptest.NewRecorder()) == nil {
		t.Error("a stream stuck past the stall time was kept")
	}
	close(w.release)
}

var _ http.Flusher = (*Stream)(nil)
