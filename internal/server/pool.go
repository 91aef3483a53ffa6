package server

import (
	"context"
	"crypto/rand"
	"errors"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/session"
)

// sessionPool holds the state of each client session (STDIO, in-memory, sessionful HTTP),
// frees it when the session ends, and keeps sessionful HTTP sessions within
// --max-sessions: it admits a new session, closing the least recently used idle one when
// the table is full (see [Server.limitSessions]).
type sessionPool struct {
	poolOptions

	// Eviction timing (see the constants below); tests shorten them.
	openWait, idleGrace, freshGrace time.Duration

	mu     sync.Mutex
	states map[*mcp.ServerSession]*session.Session
	// http and opening count HTTP sessions for --max-sessions; changed is closed and
	// replaced whenever one may have become free to evict.
	http    map[string]*httpSession
	opening int
	changed chan struct{}
	done    bool
	waiters sync.WaitGroup // the goroutines that free each state when its session ends
}

// poolOptions is what a [sessionPool] is made with.
type poolOptions struct {
	log      *slog.Logger
	max      int                                         // --max-sessions
	newState func(id string) *session.Session            // a fresh state
	opened   func(*session.Session, *mcp.Implementation) // a state was made, for this client
	ended    func(*session.Session)                      // a state was closed
	live     iter.Seq[string]                            // the ids of the protocol sessions still open
}

// httpSession is what the pool tracks of a sessionful HTTP session for --max-sessions.
type httpSession struct {
	lastUsed time.Time
	inflight int  // POSTs being served
	called   bool // a tool call has finished: the client is past its handshake
}

// Eviction timing. A session is spared for idleGrace after its last request, so that its
// client reads the reply before the session goes, and for freshGrace if it has not made a
// tool call yet, so that a client that has just opened it gets to use it. A new session
// waits up to openWait for one to become free to close.
const (
	idleGrace  = time.Second
	freshGrace = 10 * time.Second
	openWait   = 30 * time.Second
)

func newSessionPool(o poolOptions) *sessionPool {
	return &sessionPool{
		poolOptions: o,
		openWait:    openWait,
		idleGrace:   idleGrace,
		freshGrace:  freshGrace,
		states:      make(map[*mcp.ServerSession]*session.Session),
		http:        make(map[string]*httpSession),
		changed:     make(chan struct{}),
	}
}

// state returns the state of ss, created on first use, closed (its processes killed) when
// ss ends.
func (p *sessionPool) state(ss *mcp.ServerSession) (*session.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.states[ss]; ok {
		return st, nil
	}
	if p.done {
		return nil, errors.New("server is shutting down")
	}
	id := ss.ID()
	if id == "" {
		id = rand.Text()
	}
	st := p.newState(id)
	p.states[ss] = st
	p.waiters.Go(func() {
		_ = ss.Wait()
		p.mu.Lock()
		delete(p.states, ss)
		delete(p.http, ss.ID())
		p.changedLocked()
		p.mu.Unlock()
		if err := st.Close(); err != nil {
			p.log.Warn("closing session", "session", st.ID, "err", err)
		}
		p.ended(st)
		p.log.Info("session closed", "session", st.ID)
	})
	client := clientOf(ss)
	p.opened(st, client)
	p.log.Info("session opened", "session", id, "client", clientName(client))
	return st, nil
}

// stateOf returns the state of the session with the given id, or nil.
func (p *sessionPool) stateOf(id string) *session.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ss, st := range p.states {
		if ss.ID() == id {
			return st
		}
	}
	return nil
}

// all returns every session's state.
func (p *sessionPool) all() []*session.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	states := make([]*session.Session, 0, len(p.states))
	for _, st := range p.states {
		states = append(states, st)
	}
	return states
}

// len returns how many sessions have a state.
func (p *sessionPool) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.states)
}

// httpLen returns how many sessionful HTTP sessions count against --max-sessions.
func (p *sessionPool) httpLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.http)
}

// close refuses new sessions from now on.
func (p *sessionPool) close() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// wait waits until every ended session's state is freed.
func (p *sessionPool) wait() { p.waiters.Wait() }

// reserve holds a slot for a session being opened, closing the least recently used idle
// session if the table is full; it waits up to openWait for one to become free, and
// reports whether it got a slot.
func (p *sessionPool) reserve(ctx context.Context) bool {
	deadline := time.Now().Add(p.openWait)
	for {
		p.mu.Lock()
		if p.done {
			p.mu.Unlock()
			return false
		}
		if len(p.http)+p.opening >= p.max {
			p.forgetEndedLocked()
		}
		if len(p.http)+p.opening < p.max {
			p.opening++
			p.mu.Unlock()
			return true
		}
		victim, retry := p.pickVictimLocked(time.Now())
		if victim != nil {
			delete(p.http, victim.ID())
			p.opening++
			p.mu.Unlock()
			p.log.Info("closing the least recently used idle session to make room", "session", victim.ID())
			go func() { _ = victim.Close() }() // the session's waiter frees its state
			return true
		}
		changed := p.changed
		p.mu.Unlock()
		if !waitChange(ctx, changed, deadline, retry) {
			return false
		}
	}
}

// waitChange waits for changed, for retry when it is positive, or until deadline, and
// reports false if the deadline has passed or ctx is done.
func waitChange(ctx context.Context, changed <-chan struct{}, deadline time.Time, retry time.Duration) bool {
	wait := time.Until(deadline)
	if wait <= 0 {
		return false
	}
	if retry > 0 && retry < wait {
		wait = retry
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// forgetEndedLocked forgets sessions that ended without a DELETE (idle timeout, failed
// initialize). p.mu must be held.
func (p *sessionPool) forgetEndedLocked() {
	live := map[string]bool{}
	for id := range p.live {
		live[id] = true
	}
	for id := range p.http {
		if !live[id] {
			delete(p.http, id)
		}
	}
}

// pickVictimLocked returns the least recently used session with no request in flight, no
// background task running, and idle past its grace; else nil, and how soon to look again.
// p.mu must be held.
func (p *sessionPool) pickVictimLocked(now time.Time) (*mcp.ServerSession, time.Duration) {
	type candidate struct {
		id       string
		lastUsed time.Time
	}
	var idle []candidate
	retry := time.Second // background tasks end without telling anyone
	for id, hs := range p.http {
		if hs.inflight > 0 {
			continue
		}
		grace := p.idleGrace
		if !hs.called {
			grace = p.freshGrace
		}
		if d := now.Sub(hs.lastUsed); d < grace {
			retry = min(retry, grace-d)
			continue
		}
		idle = append(idle, candidate{id, hs.lastUsed})
	}
	if len(idle) == 0 {
		return nil, retry
	}
	slices.SortFunc(idle, func(a, b candidate) int { return a.lastUsed.Compare(b.lastUsed) })
	byID := make(map[string]*mcp.ServerSession, len(p.states))
	for ss := range p.states {
		byID[ss.ID()] = ss
	}
	for _, c := range idle {
		if ss := byID[c.id]; ss != nil && !runningTasks(p.states[ss]) {
			return ss, 0
		}
	}
	return nil, retry
}

// confirm turns a reservation into a counted session, when one was opened (id is not "").
func (p *sessionPool) confirm(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opening--
	if id != "" {
		p.http[id] = &httpSession{lastUsed: time.Now()}
	} else {
		p.changedLocked()
	}
}

// use records a request on the session id, until the returned function is called.
func (p *sessionPool) use(id string) (done func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hs := p.http[id]
	if hs == nil {
		return func() {}
	}
	hs.inflight++
	hs.lastUsed = time.Now()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		hs.inflight--
		hs.lastUsed = time.Now()
		if hs.inflight == 0 {
			p.changedLocked()
		}
	}
}

// markCalled records that a tool call on the session id has finished.
func (p *sessionPool) markCalled(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if hs := p.http[id]; hs != nil {
		hs.called = true
	}
}

// forget stops counting the session id, which the client deleted.
func (p *sessionPool) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.http, id)
	p.changedLocked()
}

// changedLocked wakes whoever waits for a session to become free. p.mu must be held.
func (p *sessionPool) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}
