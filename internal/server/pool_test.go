package server

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// testPool is a pool of at most max HTTP sessions, whose protocol sessions are those
// named in open (guarded by mu).
func testPool(max int, mu *sync.Mutex, open *[]string) *sessionPool {
	return newSessionPool(poolOptions{
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		max: max,
		live: func(yield func(string) bool) {
			mu.Lock()
			ids := slices.Clone(*open)
			mu.Unlock()
			for _, id := range ids {
				if !yield(id) {
					return
				}
			}
		},
	})
}

// TestPoolAdmission: the pool admits sessions up to its bound, a new one waits while the
// table is full, and gets the slot a deleted session frees.
func TestPoolAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		open := []string{"a"}
		p := testPool(1, &mu, &open)
		if !p.reserve(t.Context()) {
			t.Fatal("reserve on an empty table = false, want true")
		}
		p.confirm("a")
		got := make(chan bool)
		go func() { got <- p.reserve(t.Context()) }()
		synctest.Wait()
		select {
		case ok := <-got:
			t.Fatalf("reserve on a full table returned %v at once, want it to wait", ok)
		default:
		}
		start := time.Now()
		p.forget("a")
		if !<-got {
			t.Error("reserve after the only session was deleted = false, want true")
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("reserve waited %v after the session was deleted, want no wait", waited)
		}
		if n := p.httpLen(); n != 0 {
			t.Errorf("httpLen() = %d, want 0 (the new session is not confirmed yet)", n)
		}
	})
}

// TestPoolAdmissionGivesUp: with every session live and none evictable, a new session is
// refused after openWait, or as soon as its request ends.
func TestPoolAdmissionGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		open := []string{"a"}
		p := testPool(1, &mu, &open)
		p.reserve(t.Context())
		p.confirm("a")
		start := time.Now()
		if p.reserve(t.Context()) {
			t.Fatal("reserve on a full table of unevictable sessions = true, want false")
		}
		if waited := time.Since(start); waited != p.openWait {
			t.Errorf("reserve gave up after %v, want openWait (%v)", waited, p.openWait)
		}
		ctx, cancel := context.WithCancel(t.Context())
		got := make(chan bool)
		go func() { got <- p.reserve(ctx) }()
		synctest.Wait()
		cancel()
		if <-got {
			t.Error("reserve with its request gone = true, want false")
		}
	})
}

// TestPoolForgetsEndedSessions: a session the MCP server no longer has (it timed out, or
// its initialize failed) frees its slot without a DELETE.
func TestPoolForgetsEndedSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		open := []string{"a"}
		p := testPool(1, &mu, &open)
		p.reserve(t.Context())
		p.confirm("a")
		mu.Lock()
		open = nil
		mu.Unlock()
		start := time.Now()
		if !p.reserve(t.Context()) {
			t.Fatal("reserve after the only session ended = false, want true")
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("reserve waited %v, want no wait", waited)
		}
	})
}

// TestPoolRefusesAfterClose: a closed pool admits nothing.
func TestPoolRefusesAfterClose(t *testing.T) {
	var mu sync.Mutex
	p := testPool(4, &mu, new([]string))
	p.close()
	if p.reserve(t.Context()) {
		t.Error("reserve on a closed pool = true, want false")
	}
}
