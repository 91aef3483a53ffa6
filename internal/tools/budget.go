package tools

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/clients"
)

// clientKey is the context key of the calling client's profile.
type clientKey struct{}

// withClient returns ctx carrying the profile of the client that sent req: the name it
// gave in initialize, or in the request's _meta on protocol 2026-07-28.
func withClient(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	p := clients.Unknown
	if req != nil {
		if c := req.ClientInfo(); c != nil {
			p = clients.Lookup(c.Name)
		}
	}
	return context.WithValue(ctx, clientKey{}, p)
}

// callerProfile returns the profile of the client a call came from.
func callerProfile(ctx context.Context) clients.Profile {
	if p, ok := ctx.Value(clientKey{}).(clients.Profile); ok {
		return p
	}
	return clients.Unknown
}

// budget is how much content one result shows to the client the call came from
// (--output-budget, else what its profile allows): a command's output (both streams
// together), a file's lines or a search's entries. Labels and notes come on top; the
// budget leaves them room within the client's limits. Past a client's limit, what a model
// needs to go on (what was left out, where the full text is, how to read it) stands at
// the start of the result and again at its end ([bothEnds]), where neither a cut from the
// middle (Codex) nor one that keeps the head (opencode) can reach both.
func (h *handlers) budget(ctx context.Context) clients.Budget {
	return callerProfile(ctx).Budget(h.Config.OutputBudget)
}

// contentBudget is the character budget of [handlers.budget].
func (h *handlers) contentBudget(ctx context.Context) int {
	return h.budget(ctx).Chars
}

// describedBudget is the character budget tool descriptions state: a client Boris does
// not know gets it, and so does every client whose limits allow it.
func (h *handlers) describedBudget() int {
	return clients.Unknown.Budget(h.Config.OutputBudget).Chars
}

// describedFileBudget is the character budget of a view that tool descriptions state, as
// [handlers.describedBudget] is for output.
func (h *handlers) describedFileBudget() int {
	return clients.Unknown.Budget(h.Config.OutputBudget).File
}

// bothEnds writes body between two copies of the notes that say what it leaves out, so
// that a client that cuts a long result in the middle keeps at least one of them. With no
// notes it writes body alone.
func bothEnds(b *strings.Builder, notes []string, body func(*strings.Builder)) {
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	body(b)
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
}

// cutToBudget keeps the whole lines of text (each ending in a newline) that fit in budget
// characters and, when maxLines is positive, maxLines lines; at least one. It returns
// them, how many lines they are, and whether any were left out.
func cutToBudget(text string, budget, maxLines int) (kept string, lines int, cut bool) {
	fits := len(text) <= budget || utf8.RuneCountInString(text) <= budget
	if fits && (maxLines <= 0 || strings.Count(text, "\n") <= maxLines) {
		return text, strings.Count(text, "\n"), false
	}
	chars, end := 0, 0
	for end < len(text) {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			break
		}
		n := utf8.RuneCountInString(text[end : end+i+1])
		if lines > 0 && (chars+n > budget || maxLines > 0 && lines >= maxLines) {
			break
		}
		chars += n
		end += i + 1
		lines++
	}
	return text[:end], lines, end < len(text)
}
