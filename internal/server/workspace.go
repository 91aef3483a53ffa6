package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/session"
)

// WorkspaceHeader names the workspace a stateless HTTP request works in. Without it, every
// stateless request made with the same credential shares one workspace.
const WorkspaceHeader = "Boris-Workspace"

// workspace is the state stateless requests share across requests: what a sessionful
// client keeps in its session.
type workspace struct {
	key      string
	owner    string // who opened it: see workspaceKey
	st       *session.Session
	active   int // tool calls running in it
	lastUsed time.Time
	timer    *time.Timer // idle reaping; nil without an idle timeout
}

// binding ties the per-request protocol session of a stateless request to its workspace.
type binding struct {
	ws   *workspace
	refs int
}

// workspaceKey names the workspace of a stateless request: its credential (the token it
// was admitted with, whatever the spelling of the scheme and the spaces around it; none
// when the server has no token) and the name in [WorkspaceHeader], if any. owner names who
// asks: the credential and the client's address, which [workspaces.bind] bounds.
// A header that is present but blank, or given twice, is refused: a client whose template
// lost its value must not land in the shared workspace.
func workspaceKey(r *http.Request, authenticated bool) (key, owner string, err error) {
	names := r.Header.Values(WorkspaceHeader)
	name := ""
	if len(names) > 0 {
		name = strings.TrimSpace(names[0])
	}
	switch {
	case len(names) > 1:
		return "", "", fmt.Errorf("%s given %d times: send it once", WorkspaceHeader, len(names))
	case len(names) == 1 && name == "":
		return "", "", fmt.Errorf("%s is empty: send a name (up to 64 letters, digits, '-', '_' or '.'), or no %s header for the credential's shared workspace", WorkspaceHeader, WorkspaceHeader)
	case len(name) > 64 || strings.IndexFunc(name, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) >= 0:
		return "", "", fmt.Errorf("%s %q: use up to 64 letters, digits, '-', '_' or '.'", WorkspaceHeader, name)
	}
	cred := ""
	if authenticated {
		cred, _ = requestToken(r) // authenticate admitted it: it is the token
	}
	sum := sha256.Sum256([]byte(cred))
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	c := hex.EncodeToString(sum[:8])
	return c + "/" + name, c + "@" + host, nil
}

// requestToken returns the token r carries: its Authorization header's bearer token, or
// else its [TokenHeader]. When both are sent, Authorization is the one checked.
func requestToken(r *http.Request) (string, bool) {
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, token, ok := strings.Cut(a, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", false
		}
		return strings.TrimSpace(token), true
	}
	if vs := r.Header.Values(TokenHeader); len(vs) == 1 {
		return strings.TrimSpace(vs[0]), true
	}
	return "", false
}

// workspaces holds the workspaces of stateless requests, within --max-sessions, and which
// protocol session is bound to which while its request runs.
//
// One owner holds at most [workspaces.quota] workspaces: past it, a new one replaces the
// owner's own least recently used idle workspace, never another's. So one client opening
// many names can push out at most that many of the others' idle workspaces when the table
// is full, and a workspace with a call or background task running is never closed.
type workspaces struct {
	workspaceOptions

	mu     sync.Mutex
	byKey  map[string]*workspace
	bound  map[*mcp.ServerSession]*binding
	done   bool
	closes sync.WaitGroup // the goroutines closing dropped workspaces' states
}

// workspaceOptions is what [workspaces] are made with.
type workspaceOptions struct {
	log      *slog.Logger
	max      int                                         // --max-sessions
	idle     time.Duration                               // --session-idle-timeout; 0: never reaped
	newState func(id string) *session.Session            // a fresh state
	opened   func(*session.Session, *mcp.Implementation) // a workspace opened, for this client
	ended    func(*session.Session)                      // a workspace closed
	// restore, changed and forget keep workspaces across restarts (see stateStore): a
	// workspace opens with what was kept of it, is kept after each call, and is dropped for
	// good when closed. Each may be nil.
	restore func(key string, st *session.Session)
	changed func(key string, st *session.Session)
	forget  func(*session.Session)
}

func newWorkspaces(o workspaceOptions) *workspaces {
	return &workspaces{
		workspaceOptions: o,
		byKey:            make(map[string]*workspace),
		bound:            make(map[*mcp.ServerSession]*binding),
	}
}

// stateOf returns the state of the workspace ss is bound to, if it is.
func (w *workspaces) stateOf(ss *mcp.ServerSession) (*session.Session, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b, ok := w.bound[ss]; ok {
		return b.ws.st, true
	}
	return nil, false
}

// bind makes ss, the protocol session of one stateless request, use the workspace named
// key, opening it if needed, until release is called. owner is who asks (see
// [workspaceKey]); client is who sent the request, shown in the live view when the
// workspace opens.
func (w *workspaces) bind(ss *mcp.ServerSession, key, owner string, client *mcp.Implementation) (release func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil, errors.New("server is shutting down")
	}
	ws := w.byKey[key]
	if ws == nil {
		if err := w.makeRoomLocked(owner); err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(key))
		ws = &workspace{key: key, owner: owner, st: w.newState("ws-" + hex.EncodeToString(sum[:6]))}
		if w.restore != nil {
			w.restore(key, ws.st)
		}
		w.byKey[key] = ws
		w.log.Info("workspace opened", "workspace", ws.st.ID, "client", clientName(client))
		w.opened(ws.st, client)
	}
	ws.active++
	if ws.timer != nil {
		ws.timer.Stop()
	}
	b := w.bound[ss]
	if b == nil {
		b = &binding{ws: ws}
		w.bound[ss] = b
	}
	b.refs++
	return func() { w.release(ss, b) }, nil
}

// release ends one binding of ss, and starts the idle timer of its workspace when nothing
// runs in it any more.
func (w *workspaces) release(ss *mcp.ServerSession, b *binding) {
	if w.changed != nil {
		defer w.changed(b.ws.key, b.ws.st)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ws := b.ws
	ws.active--
	ws.lastUsed = time.Now()
	if ws.active == 0 && w.idle > 0 && !w.done {
		if ws.timer == nil {
			ws.timer = time.AfterFunc(w.idle, func() { w.reap(ws) })
		} else {
			ws.timer.Reset(w.idle)
		}
	}
	if b.refs--; b.refs == 0 {
		delete(w.bound, ss)
	}
}

// quota is how many workspaces one owner may hold: a quarter of the table, at least one.
func (w *workspaces) quota() int { return max(1, w.max/4) }

// makeRoomLocked makes room for a new workspace of owner, closing one that has nothing
// running if needed: the owner's own when it holds its quota, else the least recently used
// of all when the table is full. w.mu must be held.
func (w *workspaces) makeRoomLocked(owner string) error {
	held := 0
	for _, ws := range w.byKey {
		if ws.owner == owner {
			held++
		}
	}
	if held >= w.quota() {
		if !w.evictLocked(owner) {
			return fmt.Errorf("this client holds %d stateless workspaces (the most one client may), each with a call or background task running: retry when one finishes, reuse a workspace name, or raise --max-sessions", held)
		}
		return nil
	}
	if len(w.byKey) >= w.max && !w.evictLocked("") {
		return fmt.Errorf("too many stateless workspaces (%d), each with a call or background task running: retry when one finishes, or raise --max-sessions", len(w.byKey))
	}
	return nil
}

// evictLocked closes the least recently used workspace that has nothing running, of owner
// when it is not "", and reports whether there was one. w.mu must be held.
func (w *workspaces) evictLocked(owner string) bool {
	var victim *workspace
	for _, ws := range w.byKey {
		if ws.active > 0 || runningTasks(ws.st) || owner != "" && ws.owner != owner {
			continue
		}
		if victim == nil || ws.lastUsed.Before(victim.lastUsed) {
			victim = ws
		}
	}
	if victim == nil {
		return false
	}
	w.dropLocked(victim)
	w.log.Info("closed the least recently used idle workspace to make room", "workspace", victim.st.ID)
	return true
}

// reap closes ws if it is still idle.
func (w *workspaces) reap(ws *workspace) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.byKey[ws.key] != ws || ws.active > 0 || time.Since(ws.lastUsed) < w.idle {
		return
	}
	w.dropLocked(ws)
	w.log.Info("idle workspace closed", "workspace", ws.st.ID)
}

// dropLocked forgets ws and closes its state in the background. w.mu must be held.
func (w *workspaces) dropLocked(ws *workspace) {
	delete(w.byKey, ws.key)
	if ws.timer != nil {
		ws.timer.Stop()
	}
	w.ended(ws.st)
	if w.forget != nil {
		w.forget(ws.st)
	}
	w.closes.Go(func() {
		if err := ws.st.Close(); err != nil {
			w.log.Warn("closing workspace", "workspace", ws.st.ID, "err", err)
		}
	})
}

// all stops every workspace's idle timer and returns their states.
func (w *workspaces) all() []*session.Session {
	w.mu.Lock()
	defer w.mu.Unlock()
	states := make([]*session.Session, 0, len(w.byKey))
	for _, ws := range w.byKey {
		if ws.timer != nil {
			ws.timer.Stop()
		}
		states = append(states, ws.st)
	}
	return states
}

// keyed returns the key and state of every workspace.
func (w *workspaces) keyed() map[string]*session.Session {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]*session.Session, len(w.byKey))
	for k, ws := range w.byKey {
		out[k] = ws.st
	}
	return out
}

// len returns how many workspaces are open.
func (w *workspaces) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byKey)
}

// close refuses new bindings from now on.
func (w *workspaces) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// wait waits until every dropped workspace's state is closed.
func (w *workspaces) wait() { w.closes.Wait() }

// runningTasks reports whether st has a background task still running.
func runningTasks(st *session.Session) bool {
	for _, t := range st.Tasks.List() {
		if _, done := t.Result(); !done {
			return true
		}
	}
	return false
}
