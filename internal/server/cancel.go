package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// cancelled keeps a STDIO client's requests in flight and which of them it cancelled, so
// that a cancelled request gets no response: MCP says a receiver of
// notifications/cancelled should not answer the request, and the SDK answers every
// request whose handler returns, cancelled or not. (Over HTTP the call's stream is closed
// instead; see [Server.httpCalls].)
type cancelled struct {
	mu    sync.Mutex
	calls map[string]bool // a request in flight, by id → the client cancelled it
}

// read notes a message from the client: a request starts, a cancellation marks the
// request it names if that is still in flight (a late one is ignored).
func (c *cancelled) read(line []byte) {
	f, ok := topFields(line)
	if !ok {
		return
	}
	switch {
	case f.request():
		if k, ok := idKey(f.id); ok {
			c.mu.Lock()
			if c.calls == nil {
				c.calls = map[string]bool{}
			}
			c.calls[k] = false
			c.mu.Unlock()
		}
	case jsonString(f.method) == "notifications/cancelled":
		var n struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &n) != nil {
			return
		}
		if k, ok := idKey(n.Params.RequestID); ok {
			c.mu.Lock()
			if _, running := c.calls[k]; running {
				c.calls[k] = true
			}
			c.mu.Unlock()
		}
	}
}

// drop reports whether a message to the client answers a request the client cancelled,
// and forgets the request it answers.
func (c *cancelled) drop(line []byte) bool {
	f, ok := topFields(bytes.TrimSpace(line))
	if !ok || !f.reply() {
		return false
	}
	k, ok := idKey(f.id)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.calls[k]
	delete(c.calls, k)
	return was
}

// idKey is a request id as a map key: a string and a number that are equal as JSON-RPC
// ids (1 and 1.0) get the same key, a string and a number never do.
func idKey(id json.RawMessage) (string, bool) {
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
		}
	}
	return "", false
}
