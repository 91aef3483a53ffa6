package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/streams"
)

// shutdownGrace bounds how long a graceful HTTP shutdown waits for open requests after every
// session's processes have been killed.
const shutdownGrace = 3 * time.Second

// Handler returns the HTTP face of the server: the MCP endpoint at /mcp and a liveness
// probe at /health.
//
// /mcp serves both protocol models. Sessionful requests (initialize, then Mcp-Session-Id;
// revisions up to 2025-11-25) each get their own state, closed with the session. Stateless
// requests (2026-07-28: no session, the protocol version in every request) share a
// workspace keyed by their credential and [WorkspaceHeader]. With --stateless, every
// request is served statelessly.
func (s *Server) Handler() http.Handler {
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout:      s.cfg.SessionIdleTimeout,
		MaxRequestBodyBytes: s.cfg.MaxRequestBytes,
		Logger:              sdkLogger(s.cfg, s.log),
	})
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           true,
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

	var sessionful http.Handler = s.streaming(stateful, false)
	sessionful = s.killOnDelete(sessionful)
	sessionful = s.limitSessions(sessionful)
	mcpHandler := s.limitStreams(s.route(sessionful, s.streaming(stateless, true)))
	mcpHandler = s.checkOrigin(mcpHandler, cop.Handler(mcpHandler))
	mcpHandler = s.authenticate(mcpHandler)
	mcpHandler = s.cors(mcpHandler)

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("POST /init", s.init)
	s.mountWatch(mux)
	mux.HandleFunc("/", s.notFound)
	return s.logRefusals(s.checkHost(mux))
}

// streamsPerSession is how many /mcp responses (event streams, or answers on their way)
// may be open at once for each session --max-sessions allows.
const streamsPerSession = 16

// streamWriteTimeout is how long one write of an /mcp response may wait for a client that
// does not read: past it, the response is dropped.
const streamWriteTimeout = time.Minute

// limitStreams bounds the GET and POST responses of /mcp open at once, sessionful and
// stateless alike: past the bound, a new request takes the place of the response whose
// write has been stuck the longest (a client that stopped reading), or gets 503 when none
// is stuck; and no write waits longer than streamWriteTimeout. So clients that stop
// reading hold a bounded amount of the server's memory.
func (s *Server) limitStreams(next http.Handler) http.Handler {
	limit := streams.New(streamsPerSession*max(s.cfg.MaxSessions, 1), streamWriteTimeout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		st := limit.Open(w)
		if st == nil {
			w.Header().Set("Retry-After", "5")
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusServiceUnavailable, "too many requests and streams open at once, all of them reading: retry later")
			return
		}
		defer st.Close()
		next.ServeHTTP(st, r)
	})
}

// notFound answers any other path with the ones this server has, for a person trying
// URLs or a client set up for the older HTTP+SSE transport (/sse).
func (s *Server) notFound(w http.ResponseWriter, _ *http.Request) {
	msg := "404 not found: Boris serves MCP over streamable HTTP at POST /mcp (the older HTTP+SSE transport, /sse, is not served); GET /health reports its status"
	if s.hub != nil {
		msg += "; /watch is the live view of tool calls"
	}
	http.Error(w, msg+".", http.StatusNotFound)
}

// statelessVersion is the first protocol revision without sessions.
const statelessVersion = "2026-07-28"

// route sends each request to the sessionful or the stateless handler.
func (s *Server) route(sessionful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Stateless || s.isStateless(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		sessionful.ServeHTTP(w, r)
	})
}

// isStateless reports whether r is a stateless request: a POST without a session that
// names a stateless protocol revision, in its header or in its body's _meta, or asks for
// server/discover (which lists every revision served, the stateless one included).
func (s *Server) isStateless(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= statelessVersion
	}
	// Peek at the body, then hand it on whole.
	buf, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxRequestBytes+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
	if err != nil || int64(len(buf)) > s.cfg.MaxRequestBytes {
		return false // the sessionful handler answers the error
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(buf, &msg) != nil {
		return false
	}
	v, _ := msg.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	return msg.Method == "server/discover" || v != ""
}

type readCloser struct {
	io.Reader
	io.Closer
}

// streaming registers each POST for the MCP middleware (see [Server.httpCalls]), so that a
// tool call can start its response at once and keep it alive, and stops the call if the
// client goes away. Stateless POSTs are given their workspace.
func (s *Server) streaming(next http.Handler, stateless bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(callHeader)
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		p := &httpPost{ctx: r.Context(), w: newStreamWriter(w, s.keepAlive()), routed: r.Header.Get(SandboxHeader) != ""}
		if stateless {
			key, owner, err := workspaceKey(r, s.tokenRequired())
			if err != nil {
				httpError(w, http.StatusBadRequest, err.Error())
				return
			}
			p.workspace, p.owner = key, owner
		}
		forget := s.posts.register(r, p)
		defer forget()
		defer p.w.finish()
		next.ServeHTTP(p.w, r)
	})
}

// SandboxHeader is the header by which agent-sandbox's router picks the sandbox a request
// goes to; the router passes it on, so a request that carries it came through the router,
// which cuts every request at its --proxy-timeout ([config.Config.RouterTimeout]).
const SandboxHeader = "X-Sandbox-ID"

func (s *Server) keepAlive() time.Duration {
	if s.cfg.StreamKeepAlive > 0 {
		return s.cfg.StreamKeepAlive
	}
	return config.DefaultStreamKeepAlive
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
	s.closing.Store(true)
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

// health answers 200 while the server serves, and 503 from the moment it starts to shut
// down, so that a readiness probe or a router stops sending it work at once.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if s.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "shutting down", "version": s.cfg.Version})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": s.cfg.Version})
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
