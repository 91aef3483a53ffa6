package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
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

// workspaceKey names the workspace of a stateless request: its credential (the bearer token
// it was admitted with, whatever the spelling of the scheme and the spaces around it; none
// when the server has no token) and the name in [WorkspaceHeader], if any. owner names who
// asks: the credential and the client's address, which [Server.bindWorkspace] bounds.
// A header that is present but blank, or given twice, is refused: a client whose template
// lost its value must not land in the shared workspace.
func workspaceKey(r *http.Request, token string) (key, owner string, err error) {
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
	if token != "" {
		cred, _ = bearerToken(r) // authenticate admitted it: it is the token
	}
	sum := sha256.Sum256([]byte(cred))
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	c := hex.EncodeToString(sum[:8])
	return c + "/" + name, c + "@" + host, nil
}

// bearerToken returns the token of r's Authorization header, if it has a bearer one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// bindWorkspace makes ss, the protocol session of one stateless request, use the workspace
// named key, opening it if needed, until release is called. owner is who asks (see
// [workspaceKey]); client is who sent the request, shown in the live view when the
// workspace opens.
//
// One owner holds at most [Server.ownerQuota] workspaces: past it, a new one replaces the
// owner's own least recently used idle workspace, never another's. So one client opening
// many names can push out at most that many of the others' idle workspaces when the table
// is full, and a workspace with a call or background task running is never closed.
func (s *Server) bindWorkspace(ss *mcp.ServerSession, key, owner string, client *mcp.Implementation) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil, errors.New("server is shutting down")
	}
	ws := s.workspaces[key]
	if ws == nil {
		if err := s.makeRoomLocked(owner); err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(key))
		ws = &workspace{key: key, owner: owner, st: s.newState("ws-" + hex.EncodeToString(sum[:6]))}
		s.workspaces[key] = ws
		s.log.Info("workspace opened", "workspace", ws.st.ID, "client", clientName(client))
		s.publishSession(ws.st, "http (stateless)", client)
	}
	ws.active++
	if ws.timer != nil {
		ws.timer.Stop()
	}
	b := s.bound[ss]
	if b == nil {
		b = &binding{ws: ws}
		s.bound[ss] = b
	}
	b.refs++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		ws.active--
		ws.lastUsed = time.Now()
		if ws.active == 0 && s.cfg.SessionIdleTimeout > 0 && !s.done {
			if ws.timer == nil {
				ws.timer = time.AfterFunc(s.cfg.SessionIdleTimeout, func() { s.reapWorkspace(ws) })
			} else {
				ws.timer.Reset(s.cfg.SessionIdleTimeout)
			}
		}
		if b.refs--; b.refs == 0 {
			delete(s.bound, ss)
		}
	}, nil
}

// ownerQuota is how many workspaces one owner may hold: a quarter of the table, at least one.
func (s *Server) ownerQuota() int { return max(1, s.cfg.MaxSessions/4) }

// makeRoomLocked makes room for a new workspace of owner, closing one that has nothing
// running if needed: the owner's own when it holds its quota, else the least recently used
// of all when the table is full. s.mu must be held.
func (s *Server) makeRoomLocked(owner string) error {
	held := 0
	for _, ws := range s.workspaces {
		if ws.owner == owner {
			held++
		}
	}
	if held >= s.ownerQuota() {
		if !s.evictWorkspaceLocked(owner) {
			return fmt.Errorf("this client holds %d stateless workspaces (the most one client may), each with a call or background task running: retry when one finishes, reuse a workspace name, or raise --max-sessions", held)
		}
		return nil
	}
	if len(s.workspaces) >= s.cfg.MaxSessions && !s.evictWorkspaceLocked("") {
		return fmt.Errorf("too many stateless workspaces (%d), each with a call or background task running: retry when one finishes, or raise --max-sessions", len(s.workspaces))
	}
	return nil
}

// evictWorkspaceLocked closes the least recently used workspace that has nothing running,
// of owner when it is not "", and reports whether there was one. s.mu must be held.
func (s *Server) evictWorkspaceLocked(owner string) bool {
	var victim *workspace
	for _, ws := range s.workspaces {
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
	s.dropWorkspaceLocked(victim)
	s.log.Info("closed the least recently used idle workspace to make room", "workspace", victim.st.ID)
	return true
}

// reapWorkspace closes ws if it is still idle.
func (s *Server) reapWorkspace(ws *workspace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.workspaces[ws.key] != ws || ws.active > 0 || time.Since(ws.lastUsed) < s.cfg.SessionIdleTimeout {
		return
	}
	s.dropWorkspaceLocked(ws)
	s.log.Info("idle workspace closed", "workspace", ws.st.ID)
}

// dropWorkspaceLocked forgets ws and closes its state in the background. s.mu must be held.
func (s *Server) dropWorkspaceLocked(ws *workspace) {
	delete(s.workspaces, ws.key)
	if ws.timer != nil {
		ws.timer.Stop()
	}
	s.publishSessionEnd(ws.st)
	s.waiters.Go(func() {
		if err := ws.st.Close(); err != nil {
			s.log.Warn("closing workspace", "workspace", ws.st.ID, "err", err)
		}
	})
}

// runningTasks reports whether st has a background task still running.
func runningTasks(st *session.Session) bool {
	for _, t := range st.Tasks.List() {
		if _, done := t.Result(); !done {
			return true
		}
	}
	return false
}
