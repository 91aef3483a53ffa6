package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/tools"
)

// httpCalls ties a tool call to the HTTP request it came in: a stateless request is bound
// to its workspace; the response starts at once and is kept alive while the call runs, so
// that clients which give up on a response that has not started (Claude Code: 60 s) wait
// for long commands; and a client that goes away stops its call as a cancel would.
func (s *Server) httpCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" {
			return next(ctx, method, req)
		}
		p := s.posts.of(req)
		if p == nil {
			return next(ctx, method, req)
		}
		if p.workspace != "" && call.Session != nil {
			release, err := s.workspaces.bind(call.Session, p.workspace, p.owner, call.ClientInfo())
			if err != nil {
				return toolError(err.Error()), nil
			}
			defer release()
		} else if call.Session != nil {
			defer s.pool.markCalled(call.Session.ID())
		}
		// An unknown tool is answered with a protocol error, which must keep its HTTP
		// status; anything else answers with a result on the stream.
		if slices.Contains(tools.Enabled(s.cfg), call.Params.Name) {
			p.w.start()
		}
		sdkCtx := ctx
		if p.routed && s.cfg.RouterTimeout > 0 {
			// The router cuts the request at its timeout: a command still running shortly
			// before then goes on as a background task, and the call answers in time.
			ctx = tools.WithCallDeadline(ctx, s.cfg.RouterTimeout)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var sid string
		if call.Session != nil {
			if st, err := s.session(call.Session); err == nil {
				sid = st.ID
			}
		}
		stop := context.AfterFunc(p.ctx, func() {
			s.log.Info("client went away during a tool call; stopping it", "session", sid, "tool", call.Params.Name)
			cancel()
		})
		defer stop()
		res, err := next(ctx, method, req)
		noAnswer(sdkCtx, call, p)
		return res, err
	}
}

// noAnswer ends the stream of a call the client cancelled with notifications/cancelled
// without its response: a cancelled request gets none (MCP, "Cancellation"), and the SDK
// answers every request whose handler returns. The SDK cancels the call's context for
// that notification, and when the session ends, whose streams end with it; a call
// stopped because its own POST went away has no stream left to end.
func noAnswer(sdkCtx context.Context, call *mcp.CallToolRequest, p *httpPost) {
	if sdkCtx.Err() == nil || p.ctx.Err() != nil || call.Extra == nil || call.Extra.CloseSSEStream == nil {
		return
	}
	call.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{})
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// streamWriter lets a tool call start its event stream before the SDK writes the first
// event, and writes an SSE comment every interval until the response ends. Writes are
// serialised, so a comment never lands inside an event.
type streamWriter struct {
	rw       http.ResponseWriter
	interval time.Duration

	mu      sync.Mutex
	wrote   bool        // the status line has gone out
	started bool        // start sent it, on the SDK's behalf
	spare   http.Header // what Header returns once the headers are sent
	frame   bool        // the SDK asked for another status after start: wrap its body as an event
	dead    bool        // a write failed: the client is gone
	ended   bool        // finish was called: the HTTP handler is returning
	stop    chan struct{}
	done    sync.WaitGroup
}

func newStreamWriter(w http.ResponseWriter, interval time.Duration) *streamWriter {
	return &streamWriter{rw: w, interval: interval, stop: make(chan struct{})}
}

func (w *streamWriter) Header() http.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		if w.spare == nil {
			w.spare = http.Header{}
		}
		return w.spare
	}
	return w.rw.Header()
}

func (w *streamWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		// A protocol error meant to carry its own status (2026-07-28) comes after the
		// stream has started: send it as an event instead, which clients read the same.
		w.frame = code != http.StatusOK
		return
	}
	if !w.wrote {
		w.wrote = true
		w.rw.WriteHeader(code)
	}
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wrote = true
	if w.frame {
		if _, err := w.write([]byte("event: message\ndata: ")); err != nil {
			return 0, err
		}
		n, err := w.write(b)
		if err == nil {
			_, err = w.write([]byte("\n\n"))
		}
		return n, err
	}
	return w.write(b)
}

// write writes b, remembering a failure. w.mu must be held.
func (w *streamWriter) write(b []byte) (int, error) {
	n, err := w.rw.Write(b)
	if err != nil {
		w.dead = true
	}
	return n, err
}

func (w *streamWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
}

func (w *streamWriter) flush() {
	if err := http.NewResponseController(w.rw).Flush(); err != nil {
		w.dead = true
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.rw }

// start sends the headers of an event stream and a first comment, if the SDK is about to
// answer with an event stream and nothing has been written yet, and keeps the stream alive
// until finish.
func (w *streamWriter) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.started || w.wrote || w.rw.Header().Get("Content-Type") != "text/event-stream" {
		return
	}
	w.started, w.wrote = true, true
	w.rw.WriteHeader(http.StatusOK)
	// A comment, so that proxies which hold back headers until body data pass them on.
	_, _ = w.write([]byte(": running\n\n"))
	w.flush()
	if w.interval > 0 {
		w.done.Go(w.keepAlive)
	}
}

func (w *streamWriter) keepAlive() {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		if !w.dead {
			if _, err := w.write([]byte(": keepalive\n\n")); err == nil {
				w.flush()
			}
		}
		dead := w.dead
		w.mu.Unlock()
		if dead {
			return
		}
	}
}

// finish stops the keepalive comments; call it before the HTTP handler returns.
func (w *streamWriter) finish() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
	close(w.stop)
	w.done.Wait()
}
