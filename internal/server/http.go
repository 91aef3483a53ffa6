package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shutdownGrace bounds how long a graceful HTTP shutdown waits for open requests after every
// session's processes have been killed.
const shutdownGrace = 3 * time.Second

// Handler returns the HTTP face of the server: the MCP endpoint at /mcp and a liveness
// probe at /health.
func (s *Server) Handler() http.Handler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      s.cfg.SessionIdleTimeout,
		MaxRequestBodyBytes: s.cfg.MaxRequestBytes,
		Logger:              sdkLogger(s.cfg, s.log),
	})
	cop := http.NewCrossOriginProtection()
	for _, o := range s.cfg.AllowOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			panic(err) // config validated the origins
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpError(w, http.StatusForbidden, "cross-origin request refused: add the origin with --allow-origin if this browser client is trusted")
	}))

	var mcpHandler http.Handler = streamable
	mcpHandler = s.killOnDelete(mcpHandler)
	mcpHandler = s.limitSessions(mcpHandler)
	mcpHandler = s.checkOrigin(mcpHandler, cop.Handler(mcpHandler))
	mcpHandler = s.authenticate(mcpHandler)
	mcpHandler = s.cors(mcpHandler)

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.HandleFunc("GET /health", s.health)
	s.mountWatch(mux)
	return s.checkHost(mux)
}

// Serve serves HTTP on ln until ctx is done, then kills every session's processes and
// shuts down.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second, // a whole request body; responses may stream for long
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": s.cfg.Version})
}

// authenticate requires the bearer token, when one is set. Only the Authorization header
// counts: a token in the URL would end up in logs and browser history.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.cfg.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r) // CORS preflight carries no credentials
			return
		}
		auth := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(auth, " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(token)))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="boris"`)
			httpError(w, http.StatusUnauthorized, "missing or wrong bearer token: send 'Authorization: Bearer <token>'")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses requests whose Host header names another site while the server listens
// on loopback: a DNS-rebinding page would send its own host name.
func (s *Server) checkHost(next http.Handler) http.Handler {
	if !isLoopbackHost(s.cfg.Host) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(hostOnly(r.Host)) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("host %q refused: this server only answers to localhost", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses a browser Origin that is neither loopback (while listening on
// loopback) nor on the --allow-origin list. Loopback origins, such as a local inspector on
// another port, go straight to next; every other request goes through protected, which
// applies cross-origin protection.
func (s *Server) checkOrigin(next, protected http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		switch {
		case origin == "" || slices.Contains(s.cfg.AllowOrigins, origin):
			protected.ServeHTTP(w, r)
		case s.originAllowed(origin):
			next.ServeHTTP(w, r)
		default:
			httpError(w, http.StatusForbidden, fmt.Sprintf("origin %q refused: add it with --allow-origin if this browser client is trusted", origin))
		}
	})
}

func (s *Server) originAllowed(origin string) bool {
	if slices.Contains(s.cfg.AllowOrigins, origin) {
		return true
	}
	if !isLoopbackHost(s.cfg.Host) {
		return false
	}
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "https://")
	}
	return ok && isLoopbackHost(hostOnly(rest))
}

// cors answers preflights and sets CORS headers for allow-listed origins only; there is never
// a wildcard.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(s.cfg.AllowOrigins, origin)
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed {
				httpError(w, http.StatusForbidden, "cross-origin request refused: add the origin with --allow-origin if this browser client is trusted")
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// killOnDelete ends a session's commands as soon as the client deletes the session: the
// SDK closes a session only once its calls have returned, so a running command would hold
// the DELETE until it finished by itself.
func (s *Server) killOnDelete(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			s.closeState(id)
		}
		next.ServeHTTP(w, r)
	})
}

// limitSessions refuses to open a session past --max-sessions. It counts the sessions it
// saw open, forgetting one as soon as its DELETE succeeds, so a client that closes a session
// can open another at once.
func (s *Server) limitSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case r.Method == http.MethodPost && id == "":
			if !s.reserveSession() {
				w.Header().Set("Retry-After", "5")
				httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many sessions (%d live): close an unused session (HTTP DELETE) or raise --max-sessions", s.cfg.MaxSessions))
				return
			}
			sw := &sessionWriter{ResponseWriter: w, confirm: s.confirmSession}
			next.ServeHTTP(sw, r)
			sw.settle()
		case r.Method == http.MethodDelete && id != "":
			next.ServeHTTP(w, r)
			s.forgetSession(id)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// reserveSession holds a slot for a session being opened.
func (s *Server) reserveSession() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.httpSessions)+s.opening >= s.cfg.MaxSessions {
		// Forget sessions that ended without a DELETE (idle timeout, failed initialize).
		live := map[string]bool{}
		for ss := range s.mcp.Sessions() {
			live[ss.ID()] = true
		}
		for id := range s.httpSessions {
			if !live[id] {
				delete(s.httpSessions, id)
			}
		}
	}
	if len(s.httpSessions)+s.opening >= s.cfg.MaxSessions {
		return false
	}
	s.opening++
	return true
}

// sessionWriter settles a session reservation when the response starts, before the client
// can act on it: counted if the response carries a new session id, released if not.
type sessionWriter struct {
	http.ResponseWriter
	confirm func(id string)
	settled bool
}

func (w *sessionWriter) settle() {
	if !w.settled {
		w.settled = true
		w.confirm(w.Header().Get("Mcp-Session-Id"))
	}
}

func (w *sessionWriter) WriteHeader(code int) {
	w.settle()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(b []byte) (int, error) {
	w.settle()
	return w.ResponseWriter.Write(b)
}

func (w *sessionWriter) Flush() {
	w.settle()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// confirmSession turns a reservation into a counted session, when one was opened.
func (s *Server) confirmSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opening--
	if id != "" {
		s.httpSessions[id] = true
	}
}

func (s *Server) forgetSession(id string) {
	s.mu.Lock()
	delete(s.httpSessions, id)
	s.mu.Unlock()
}

// httpError writes a JSON-RPC error body, which MCP clients can show, with an HTTP status.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": -32000, "message": msg},
	})
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
