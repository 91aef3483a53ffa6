package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
)

// RunStdio serves one client over r and w until the client disconnects or ctx is done.
// When the client closes its end, requests it already sent are still answered (a piped
// batch of requests gets its replies), for up to the configured StdioDrain; then running commands are
// killed rather than left to finish for nobody.
func (s *Server) RunStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	defer s.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pending{idle: make(chan struct{})}
	stop := context.AfterFunc(ctx, s.closeStates) // signal: kill at once
	defer stop()
	var calls cancelled
	out := &replyWriter{w: w, p: p, drop: calls.drop}
	lines := &lineFilter{r: r, accept: func(requests int) { p.add(requests) }, seen: calls.read, reject: func(id json.RawMessage, code int, msg string) {
		s.log.Warn("answered a line from the client that is not a JSON-RPC message", "error", msg)
		out.reject(id, code, msg)
	}}
	drain := s.cfg.StdioDrain
	if drain <= 0 {
		drain = config.DefaultStdioDrain
	}
	in := &drainReader{r: lines, c: r, drain: func() {
		select {
		case <-p.drained():
		case <-time.After(drain):
			s.closeStates()
			<-p.drained() // calls end promptly once their commands are dead
		case <-ctx.Done():
		}
	}}
	// The line filter bounds a message's size, and hands the SDK only lines it takes.
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1})
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("stdio: %w", err)
}

// pending counts requests read from the client and not yet answered.
type pending struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // replaced while n > 0; closed when n drops to 0
}

func (p *pending) add(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 && delta > 0 {
		p.idle = make(chan struct{})
	}
	p.n += delta
	if p.n <= 0 {
		p.n = 0
		select {
		case <-p.idle:
		default:
			close(p.idle)
		}
	}
}

// drained returns a channel closed when no request is waiting for a reply.
func (p *pending) drained() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.idle
}

// messages calls f for each complete newline-delimited JSON-RPC message in the stream of
// chunks fed to it, counting requests (method and id) or replies (id, no method).
type messages struct {
	partial []byte
}

func (m *messages) feed(b []byte, count func(requests, replies int)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(m.partial) < 64<<20 { // a message larger than this is not counted
				m.partial = append(m.partial, b...)
			}
			return
		}
		line := b[:i]
		if len(m.partial) > 0 {
			line = append(m.partial, line...)
			m.partial = m.partial[:0]
		}
		count(classify(line))
		b = b[i+1:]
	}
}

// drainReader holds back the end of its input until drain returns.
type drainReader struct {
	r     io.Reader
	c     io.Closer
	drain func()
	once  sync.Once
}

func (d *drainReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	if err != nil && n == 0 {
		d.once.Do(d.drain)
	}
	return n, err
}

func (d *drainReader) Close() error { return d.c.Close() }

// replyWriter counts the replies written to the client, and leaves out those that drop
// picks: the SDK writes each message whole, in one Write.
type replyWriter struct {
	w    io.WriteCloser
	p    *pending
	drop func([]byte) bool // a reply to a request the client cancelled
	mu   sync.Mutex
	msgs messages
}

func (rw *replyWriter) Write(b []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.drop != nil && len(rw.msgs.partial) == 0 && bytes.IndexByte(b, '\n') == len(b)-1 && rw.drop(b) {
		rw.p.add(-1) // answered, as far as draining goes
		return len(b), nil
	}
	n, err := rw.w.Write(b)
	rw.msgs.feed(b[:n], func(_, r int) { rw.p.add(-r) })
	return n, err
}

// reject answers, with a JSON-RPC error, a line from the client that was not a message.
func (rw *replyWriter) reject(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	if err != nil {
		return
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	_, _ = rw.w.Write(append(b, '\n'))
}

func (rw *replyWriter) Close() error { return rw.w.Close() }
