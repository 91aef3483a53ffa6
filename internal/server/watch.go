package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/loopback"
	"github.com/mjkoo/boris/internal/search"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/tools"
	"github.com/mjkoo/boris/internal/watch"
)

// Watch returns the live event stream, or nil with --no-watch.
func (s *Server) Watch() *watch.Hub { return s.hub }

// startWatch sets up the live view's event stream, unless --no-watch. Over STDIO the
// view is served only on the --watch address: without one nobody could follow the
// stream, so none is kept.
func (s *Server) startWatch() {
	if s.cfg.NoWatch || s.cfg.Transport == "stdio" && s.cfg.WatchAddr == "" {
		return
	}
	s.hub = watch.NewHub(watch.Options{Redact: s.cfg.Token})
	if s.cfg.Token == "" && (s.cfg.InitToken != "" || s.policy.Paths() && !s.policy.Network()) {
		// Confined commands can reach the server's port, and the page would let them see
		// and stop other sessions' commands: it needs a key they cannot have. So does a
		// server whose token comes later, from /init.
		s.watchKey = rand.Text()
	}
	s.mcp.AddReceivingMiddleware(watch.Middleware(s.hub, func(ss *mcp.ServerSession) string {
		if ss == nil {
			return ""
		}
		st, err := s.session(ss)
		if err != nil {
			return ""
		}
		return st.ID
	}, func(tool string, args json.RawMessage) watch.ToolCall { return tools.ViewCall(tool, args) }))
}

// indexReady logs that a search index is ready and tells the watchers how big it is.
func (s *Server) indexReady(i search.IndexInfo) {
	how := "built"
	if i.Loaded {
		how = "loaded from the cache directory"
	}
	s.log.Info("search index ready", "root", i.Root, "files", i.Files, "memory_mb", i.Bytes>>20, "file_mb", i.Mapped>>20, "how", how, "took", i.Took.Round(time.Millisecond))
	if s.hub == nil {
		return
	}
	s.hub.Publish(watch.Event{Kind: watch.KindIndex, Cwd: i.Root, Files: i.Files,
		Summary: fmt.Sprintf("search index of %s: %d files, about %.1f MB in memory and %.1f MB on disk, %s in %s",
			i.Root, i.Files, float64(i.Bytes)/(1<<20), float64(i.Mapped)/(1<<20), how, i.Took.Round(time.Millisecond))})
}

// publishSession tells the watchers a session (or a stateless workspace) opened, for
// client (nil when unknown) over transport.
func (s *Server) publishSession(st *session.Session, transport string, client *mcp.Implementation) {
	if s.hub == nil {
		return
	}
	e := watch.Event{Kind: watch.KindSession, Session: st.ID, Transport: transport, Cwd: st.Cwd()}
	if client != nil {
		e.Client, e.Version = client.Name, client.Version
	}
	s.hub.Publish(e)
}

// clientOf is the client a sessionful protocol session named when it initialized.
func clientOf(ss *mcp.ServerSession) *mcp.Implementation {
	if p := ss.InitializeParams(); p != nil {
		return p.ClientInfo
	}
	return nil
}

// clientName is how the log names a client: its name and version, or "unknown".
func clientName(c *mcp.Implementation) string {
	if c == nil || c.Name == "" {
		return "unknown"
	}
	return strings.TrimSpace(c.Name + " " + c.Version)
}

func (s *Server) publishSessionEnd(st *session.Session) {
	if s.hub != nil {
		s.hub.Publish(watch.Event{Kind: watch.KindSessionEnd, Session: st.ID})
	}
}

// mountWatch serves the live view on mux, protected as /mcp is: Host checked while on
// loopback, the token required when set, same-origin only.
func (s *Server) mountWatch(mux *http.ServeMux) {
	if s.hub == nil {
		return
	}
	h := s.WatchHandler(s.cfg.Host)
	mux.Handle("/watch", h)
	mux.Handle("/watch/", h)
}

// WatchHandler returns the live view's handler for a listener on host.
func (s *Server) WatchHandler(host string) http.Handler {
	token := s.cfg.Token
	if token == "" {
		token = s.watchKey
	}
	return watch.Handler(s.hub, watch.HandlerOptions{Token: token, Loopback: loopback.Host(host), Rewind: s.viewRewinder()})
}

// viewRewinder is how the person watching rewinds the workspace: the rewind tool's way,
// each rewind done (not a dry run) logged beside the tool calls. Nil when the rewind tool
// is not offered.
func (s *Server) viewRewinder() watch.Rewinder {
	rewind := tools.ViewRewinder(tools.Deps{Config: s.cfg, Logger: s.log, Checkpoints: s.checkpoints})
	if rewind == nil {
		return nil
	}
	return func(ctx context.Context, to string, dry, force bool) (*watch.Rewind, error) {
		start := time.Now()
		res, err := rewind(ctx, to, dry, force)
		if dry {
			return res, err
		}
		attrs := []any{"to", to, "force", force, "duration_ms", time.Since(start).Milliseconds()}
		if err != nil {
			attrs = append(attrs, "outcome", "refused", "err", err)
		} else {
			attrs = append(attrs, "outcome", "ok", "paths", len(res.Actions), "rescue", res.Rescue)
		}
		s.log.Info("rewind from the live view", attrs...)
		return res, err
	}
}

// WatchKey returns the key the live view needs on a server without a token whose commands
// are confined to paths but may open TCP connections, and so could reach the page: it is
// made at startup, held in memory only, and taken as the token is (a bearer token, or
// /watch?token=KEY once for a cookie). It is "" on any other server.
func (s *Server) WatchKey() string { return s.watchKey }

// ServeWatch serves the live view alone on ln (stdio mode, --watch) until ctx is done.
func (s *Server) ServeWatch(ctx context.Context, ln net.Listener) error {
	if s.hub == nil {
		return errors.New("the live view is off (--no-watch)")
	}
	mux := http.NewServeMux()
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	if s.cfg.WatchAddr != "" {
		host, _, _ = net.SplitHostPort(s.cfg.WatchAddr)
	}
	h := s.WatchHandler(host)
	mux.Handle("/watch", h)
	mux.Handle("/watch/", h)
	mux.Handle("/{$}", http.RedirectHandler("/watch", http.StatusSeeOther))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() {
		<-ctx.Done()
		_ = hs.Close() // streams never end by themselves
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
