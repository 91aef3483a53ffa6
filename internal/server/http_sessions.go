package server

import (
	"fmt"
	"net/http"
)

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

// limitSessions keeps sessionful HTTP sessions within --max-sessions. Clients rarely close
// their sessions (HTTP DELETE), so when the table is full, opening a session closes the
// least recently used one that has nothing running; only when every session is busy does
// it wait a little for one to free up, then refuse.
func (s *Server) limitSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case r.Method == http.MethodPost && id == "":
			if !s.pool.reserve(r.Context()) {
				w.Header().Set("Retry-After", "5")
				httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many sessions (%d live), each with a call or background task running: retry later, close an unused session (HTTP DELETE) or raise --max-sessions", s.cfg.MaxSessions))
				return
			}
			sw := &sessionWriter{ResponseWriter: w, confirm: s.pool.confirm}
			next.ServeHTTP(sw, r)
			sw.settle()
		case r.Method == http.MethodPost:
			done := s.pool.use(id)
			defer done()
			next.ServeHTTP(w, r)
		case r.Method == http.MethodDelete && id != "":
			next.ServeHTTP(w, r)
			s.pool.forget(id)
		default:
			next.ServeHTTP(w, r)
		}
	})
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
