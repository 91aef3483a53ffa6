package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
// it was admitted with, or none) and the name in [WorkspaceHeader], if any.
func workspaceKey(r *http.Request) (string, error) {
	name := strings.TrimSpace(r.Header.Get(WorkspaceHeader))
	if len(name) > 64 || strings.IndexFunc(name, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) >= 0 {
		return "", fmt.Errorf("%s %q: use up to 64 letters, digits, '-', '_' or '.'", WorkspaceHeader, name)
	}
	cred := sha256.Sum256([]byte(r.Header.Get("Authorization")))
	return hex.EncodeToString(cred[:8]) + "/" + name, nil
}

// bindWorkspace makes ss, the protocol session of one stateless request, use the workspace
// named key, opening it if needed, until release is called. client is who sent the request,
// shown in the live view when the workspace opens.
func (s *Server) bindWorkspace(ss *mcp.ServerSession, key string, client *mcp.Implementation) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil, errors.New("server is shutting down")
	}
	ws := s.workspaces[key]
	if ws == nil {
		if len(s.workspaces) >= s.cfg.MaxSessions && !s.evictWorkspaceLocked() {
			return nil, fmt.Errorf("too many stateless workspaces (%d), each with a call or background task running: retry when one finishes, or raise --max-sessions", len(s.workspaces))
		}
		sum := sha256.Sum256([]byte(key))
		ws = &workspace{key: key, st: s.newState("ws-" + hex.EncodeToString(sum[:6]))}
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

// evictWorkspaceLocked closes the least recently used workspace that has nothing running,
// and reports whether there was one. s.mu must be held.
func (s *Server) evictWorkspaceLocked() bool {
	var victim *workspace
	for _, ws := range s.workspaces {
		if ws.active > 0 || runningTasks(ws.st) {
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
