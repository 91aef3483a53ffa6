// Package mcptask serves the MCP Tasks extension (io.modelcontextprotocol/tasks): a tool
// call that runs long answers at once with a task, which the client polls with tasks/get
// until it has the call's result, and may stop with tasks/cancel. Only a request whose
// client capabilities declare the extension gets a task.
package mcptask

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's name, in capabilities.
const Extension = "io.modelcontextprotocol/tasks"

// metaCapabilities is the _meta key of a 2026-07-28 request's client capabilities.
const metaCapabilities = "io.modelcontextprotocol/clientCapabilities"

// CodeMissingCapability is the error of a request the extension's methods need the
// client to have declared it for.
const CodeMissingCapability = -32021

// Declared reports whether a request's _meta declares the extension among the client's
// capabilities.
func Declared(meta map[string]any) bool {
	caps, _ := meta[metaCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[Extension]
	return ok
}

// errMissing is the protocol error for a task method from a client that did not declare
// the extension.
func errMissing() error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{Extension: map[string]any{}}}})
	return &jsonrpc.Error{Code: CodeMissingCapability, Message: "Missing required client capability: " + Extension, Data: data}
}

// Work is what a task stands for: a command running on, its final result once it has
// ended, and a way to stop it.
type Work interface {
	// Done is closed when the work has ended.
	Done() <-chan struct{}
	// Result is the tool call's final result; called once, after Done.
	Result() *mcp.CallToolResult
	// Status says how the work stands, in a few words, for statusMessage.
	Status() string
	// Cancel asks the work to stop, without waiting; calling it again does nothing more.
	Cancel()
}

// Offer lets one tool call become a task: its handler calls Accept with the work that
// goes on, and returns a placeholder result that the caller replaces with the task.
type Offer struct {
	mu   sync.Mutex
	work Work
	id   string
}

type offerKey struct{}

// WithOffer returns ctx carrying a new Offer, for a tool call that may become a task.
func WithOffer(ctx context.Context) (context.Context, *Offer) {
	o := &Offer{}
	return context.WithValue(ctx, offerKey{}, o), o
}

// OfferFrom returns the Offer ctx carries, or nil: the call may not become a task.
func OfferFrom(ctx context.Context) *Offer {
	o, _ := ctx.Value(offerKey{}).(*Offer)
	return o
}

// Accept makes the call a task standing for w; id names the work in the tools' own words
// (a background task's id), and starts the task's id.
func (o *Offer) Accept(id string, w Work) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.id, o.work = id, w
}

// Accepted returns the work the call became, and its id, if it became a task.
func (o *Offer) Accepted() (string, Work) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.id, o.work
}
