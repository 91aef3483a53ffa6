package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mjkoo/boris/internal/loopback"
)

// TokenHeader carries the token for clients behind a proxy that removes Authorization,
// such as agent-sandbox's router: `Boris-Token: <token>` counts as `Authorization: Bearer
// <token>`.
const TokenHeader = "Boris-Token"

// authenticate requires the token, when one is set, in Authorization (Bearer) or in
// [TokenHeader]. Only headers count: a token in the URL would end up in logs and browser
// history.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if !s.tokenRequired() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r) // CORS preflight carries no credentials
			return
		}
		want := s.cred.sum.Load()
		if want == nil {
			httpError(w, http.StatusUnauthorized, "this sandbox has no token yet: the control plane gives it one with POST /init")
			return
		}
		token, ok := requestToken(r)
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="boris"`)
			httpError(w, http.StatusUnauthorized, "missing or wrong token: send 'Authorization: Bearer <token>', or 'Boris-Token: <token>' through a proxy that removes Authorization")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses requests whose Host header names another site while the server listens
// on loopback: a DNS-rebinding page would send its own host name.
func (s *Server) checkHost(next http.Handler) http.Handler {
	if !loopback.Host(s.cfg.Host) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopback.HostPort(r.Host) {
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
	if !loopback.Host(s.cfg.Host) {
		return false
	}
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "https://")
	}
	return ok && loopback.HostPort(rest)
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
			h.Set("Access-Control-Allow-Headers", "Authorization, Boris-Token, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, "+WorkspaceHeader)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
