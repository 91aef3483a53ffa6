package server

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// A client that is refused (a missing or wrong token, a refused Host or Origin, a session
// the server no longer has) usually reports only "failed to connect", so the server says
// why in its own log: once per client and reason, at the default level, then again at
// most every refusalQuiet, so that a client retrying in a loop does not flood the log.
const (
	refusalQuiet   = 10 * time.Minute
	maxRefusalKeys = 1024
	maxReasonBytes = 300
)

// refusals remembers when each client was last told about each reason.
type refusals struct {
	log *slog.Logger

	mu     sync.Mutex
	logged map[string]time.Time // client + status + reason -> when it was logged
}

// logRefusals logs the requests next refuses with a 4xx status (see [refusals]).
func (s *Server) logRefusals(next http.Handler) http.Handler {
	rf := &refusals{log: s.log, logged: map[string]time.Time{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &refusalRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if refused(r, rec.status) {
			rf.note(r, rec.status, rec.reason.String())
		}
	})
}

// refused reports whether a response with status refused the request: a 401 or 403
// anywhere, an unknown session, or any other client error on /mcp. A 404 for another
// path (a browser's /favicon.ico) is not a refusal.
func refused(r *http.Request, status int) bool {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return true
	case status == http.StatusNotFound:
		return r.URL.Path == "/mcp" && r.Header.Get("Mcp-Session-Id") != ""
	}
	return status >= 400 && status < 500 && r.URL.Path == "/mcp"
}

// note logs one refusal unless the same client was told the same reason recently.
func (rf *refusals) note(r *http.Request, status int, body string) {
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		client = r.RemoteAddr
	}
	reason, hint := refusalReason(r, status, body)
	key := client + "\x00" + http.StatusText(status) + "\x00" + reason
	now := time.Now()
	rf.mu.Lock()
	last, seen := rf.logged[key]
	if seen && now.Sub(last) < refusalQuiet {
		rf.mu.Unlock()
		return
	}
	if len(rf.logged) >= maxRefusalKeys {
		clear(rf.logged) // a bound, not a cache: forgetting means at most a repeated line
	}
	rf.logged[key] = now
	rf.mu.Unlock()
	rf.log.Warn("refused a request", "client", client, "status", status, "method", r.Method, "path", r.URL.Path,
		"reason", reason, "fix", hint, "repeats", "logged again for this client and reason after "+refusalQuiet.String())
}

// refusalReason names why a request was refused, from the status and the body the client
// was sent (which never holds a credential), and what the client's user should do.
func refusalReason(r *http.Request, status int, body string) (reason, hint string) {
	reason = strings.TrimSpace(body)
	if i := strings.IndexByte(reason, '\n'); i >= 0 {
		reason = reason[:i]
	}
	if msg, ok := jsonErrorMessage(reason); ok {
		reason = msg
	}
	switch {
	case status == http.StatusUnauthorized && r.Header.Get("Authorization") == "" && r.Header.Get(TokenHeader) == "":
		return "no bearer token", "configure the client with the header 'Authorization: Bearer <token>' (or 'Boris-Token: <token>' through a proxy that removes Authorization), the token this server was started with"
	case status == http.StatusUnauthorized:
		return "wrong bearer token", "the client's 'Authorization: Bearer' token is not this server's: check that both hold the same token (a server restarted with --generate-token has a new one)"
	case status == http.StatusNotFound && r.Header.Get("Mcp-Session-Id") != "":
		return "unknown MCP session", "the session ended (idle timeout, --max-sessions eviction or a server restart): the client must reconnect to open a new one"
	case status == http.StatusForbidden:
		return reason, "see the reason; a client on another machine needs --host and a token, a browser page needs --allow-origin"
	}
	return reason, "the request does not follow the MCP streamable HTTP transport; see the reason"
}

// jsonErrorMessage returns the message of a JSON-RPC error body such as httpError writes.
func jsonErrorMessage(body string) (string, bool) {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Error.Message == "" {
		return "", false
	}
	return e.Error.Message, true
}

// refusalRecorder keeps the status and the start of the body of a response.
type refusalRecorder struct {
	http.ResponseWriter
	status int
	reason strings.Builder
}

func (w *refusalRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *refusalRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && w.reason.Len() < maxReasonBytes {
		w.reason.Write(b[:min(len(b), maxReasonBytes-w.reason.Len())])
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes streamed responses on as they are written.
func (w *refusalRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets [http.ResponseController] reach the connection.
func (w *refusalRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
