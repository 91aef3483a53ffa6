package clients

import (
	"strings"
	"time"
)

// Profile is what Boris knows of one MCP client: the limits it imposes on a result and
// on a call, as measured with the release named in Measured.
type Profile struct {
	// Name is how the documentation names the client.
	Name string
	// IDs are the names the client gives itself (clientInfo.name in initialize, or in a
	// request's _meta on protocol 2026-07-28). A client whose name starts with one of them,
	// in any case, has this profile.
	IDs []string
	// Chars is the most characters of one result the client passes to its model whole;
	// past it the client cuts or replaces the result. 0: no limit known.
	Chars int
	// Lines is the most lines of one result the client passes to its model; past them it
	// keeps the first Lines. 0: no limit known.
	Lines int
	// Deadline is how long the client waits for a call's result by default, on a timer
	// that nothing extends (it sends no progress token, or ignores progress). 0: none
	// known, or one that progress extends.
	Deadline time.Duration
	// SessionPerCall says that the client opens a new session for every call, so that
	// nothing a session remembers (the working directory, files viewed) carries over.
	SessionPerCall bool
	// Measured says which release the figures come from and how they were found.
	Measured string
}

// Budget is how much content (a command's output, a file's lines, a search's entries)
// one result shows. Labels and notes come on top of it, within the client's limits.
type Budget struct {
	Chars int // characters of content
	// File is the characters of a file's lines one view shows: as many as the client
	// passes whole, so that the 2,000 lines a view shows by default come back whole
	// where they fit (DefaultFileChars for a client whose limit is not known).
	File  int
	Lines int // lines of content; 0: no limit
}

// Room for what a result holds besides its content: labels (exit code, stream names)
// and the notes that say what a cut left out, at both ends of the result. Both notes of
// a result whose two streams were cut, with long paths, stay within these.
const (
	NotesChars = 2_000
	NotesLines = 20
)

// DefaultChars is the content a result shows where the client allows it: the seed's
// promise that a command's output up to 30,000 characters comes back whole.
const DefaultChars = 30_000

// DefaultFileChars is the most characters of a file's lines a view shows a client whose
// limit is not known: what Codex passes whole (about 48,000), less the notes; 2,000 lines
// of up to 16 characters each, with their numbers.
const DefaultFileChars = 46_000

// Budget is the content budget of one result for a client with profile p: DefaultChars,
// less where the client passes less, and in lines where it counts lines, leaving room for
// the notes in both. chars, when positive, replaces the character budget (--output-budget).
func (p Profile) Budget(chars int) Budget {
	b := Budget{Chars: DefaultChars, File: DefaultFileChars}
	if p.Chars > 0 {
		b.Chars = min(b.Chars, p.Chars-NotesChars)
		b.File = p.Chars - NotesChars
	}
	if chars > 0 {
		b.Chars, b.File = chars, chars
	}
	if p.Lines > 0 {
		b.Lines = p.Lines - NotesLines
	}
	return b
}

// Unknown is the profile of a client Boris does not know: no limits known, so results
// get the default budget.
var Unknown = Profile{Name: "an unknown client"}

// Lookup returns the profile of the client that calls itself name, or [Unknown].
func Lookup(name string) Profile {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return Unknown
	}
	for _, p := range Profiles {
		for _, id := range p.IDs {
			if strings.HasPrefix(name, strings.ToLower(id)) {
				return p
			}
		}
	}
	return Unknown
}

// Profiles are the clients Boris knows, with what each imposes. docs/clients.md says
// the same for people; keep them together.
var Profiles = []Profile{
	{
		Name: "Claude Code", IDs: []string{"claude-code"},
		Chars:    100_000,
		Measured: "2.1.332: a result over 25,000 tokens (MAX_MCP_OUTPUT_TOKENS; about 100,000 characters) is replaced by an error and saved on the client's machine; calls carry a progress token and move to a background task of the client's after 2 minutes",
	},
	{
		Name: "Codex CLI", IDs: []string{"codex-mcp-client"},
		Chars:    48_000,
		Measured: "0.171.0: a text result is cut from the middle to about 48,000 characters (10,000 tokens) for its current models, about 12,000 for a model it does not know; its per-call timer (tool_timeout_sec) is hard but configurable",
	},
	{
		Name: "Gemini CLI", IDs: []string{"gemini-cli-mcp-client"},
		Measured: "0.61.0: no cut seen; an error result reaches the model as the escaped JSON of the whole result; 10-minute call timeout",
	},
	{
		Name: "Qwen Code", IDs: []string{"qwen-cli-mcp-client", "qwen-code-mcp-client", "qwen-code"},
		Chars: 25_000, Lines: 1_000,
		Measured: "0.24.4: calls itself qwen-cli-mcp-client-SERVER; a result over 25,000 characters (or 1,000 lines) is saved on the client's side and the model gets a 2,000-character preview; an error result reaches the model as the escaped JSON of the whole result; 10-minute call timeout",
	},
	{
		Name: "opencode", IDs: []string{"opencode"},
		Chars: 50_000, Lines: 2_000,
		Measured: "1.18.33: keeps the first 2,000 lines (and at most 50 KB) of a result and saves the rest on its side; `seq 1 200000` came back as its first 2,000 lines and \"...N lines truncated...\"",
	},
	{
		// The JavaScript SDK names itself after the server it connects to: "stdio: COMMAND"
		// or "streamable-http: URL" unless the program names the server.
		// Given a name, as its examples do, it calls itself by the server's name: "boris" in
		// Boris's documentation.
		Name: "OpenAI Agents SDK (JavaScript)", IDs: []string{"openai-agents", "stdio:", "streamable-http:", "boris"},
		Deadline: 60 * time.Second,
		Measured: "0.20.0: a 60 s call timeout by default (the timeout option), with no progress token, so nothing extends it; at 60 s the call fails with \"Request timed out\" and is cancelled",
	},
	{
		Name: "GitHub Copilot CLI", IDs: []string{"copilot-cli", "github-copilot-developer", "copilot"},
		Chars:    20_000,
		Measured: "1.0.102: a result of 20,000 characters passes, one of 23,500 is replaced by \"Output too large to read at once (N KB). Saved to: …\" and a 500-character preview",
	},
	{
		Name: "cline", IDs: []string{"@cline/", "cline"},
		Chars:    8_000,
		Deadline: 60 * time.Second,
		Measured: "3.0.65: calls itself @cline/core; a 60 s call timeout (timeout in its MCP settings) with no progress token, which over HTTP ends the command; every result reaches the model as the raw result JSON, cut from the middle to about 8,000 characters",
	},
	{
		Name: "MCP Inspector", IDs: []string{"inspector-cli", "inspector-client", "mcp-inspector"},
		Deadline:       60 * time.Second,
		SessionPerCall: true,
		Measured:       "2.12.0 (CLI): a 60 s request timeout; every CLI call is a new session (a new process over STDIO, a new Mcp-Session-Id over HTTP)",
	},
}
