package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callHeader carries, from the HTTP layer to the MCP middleware, the id under which an
// HTTP request is registered in [postRegistry]. Whatever a client sends in it is dropped.
const callHeader = "Boris-Internal-Post"

// httpPost is one HTTP POST being served, as the MCP middleware sees it.
type httpPost struct {
	ctx       context.Context // the HTTP request's: done when the client goes away
	w         *streamWriter
	workspace string // stateless requests: the workspace key; "" for sessionful ones
	owner     string // stateless requests: their credential and client address
	routed    bool   // it came through a sandbox router (see [SandboxHeader])
}

// postRegistry holds the HTTP POSTs being served, so that the MCP middleware can find the
// one a request arrived in: the SDK hands a request's headers on, nothing else of it.
type postRegistry struct {
	mu    sync.Mutex
	posts map[string]*httpPost // by callHeader id
}

// register records a POST under a fresh id in its header, and returns a function that
// forgets it.
func (pr *postRegistry) register(r *http.Request, p *httpPost) (forget func()) {
	id := rand.Text()
	r.Header.Del(callHeader)
	r.Header.Set(callHeader, id)
	pr.mu.Lock()
	if pr.posts == nil {
		pr.posts = make(map[string]*httpPost)
	}
	pr.posts[id] = p
	pr.mu.Unlock()
	return func() {
		pr.mu.Lock()
		delete(pr.posts, id)
		pr.mu.Unlock()
	}
}

// of returns the HTTP POST a request arrived in, or nil (STDIO, in-memory transports).
func (pr *postRegistry) of(req mcp.Request) *httpPost {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return nil
	}
	id := extra.Header.Get(callHeader)
	if id == "" {
		return nil
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.posts[id]
}
