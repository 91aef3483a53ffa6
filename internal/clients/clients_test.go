package clients

import (
	"testing"
	"time"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, want string }{
		{"claude-code", "Claude Code"},
		{"codex-mcp-client", "Codex CLI"},
		{"gemini-cli-mcp-client", "Gemini CLI"},
		{"Gemini-CLI-MCP-Client-boris", "Gemini CLI"},
		{"qwen-code-mcp-client", "Qwen Code"},
		{"opencode", "opencode"},
		{"stdio: /usr/local/bin/boris", "OpenAI Agents SDK (JavaScript)"},
		{"streamable-http: http://127.0.0.1:8080/mcp", "OpenAI Agents SDK (JavaScript)"},
		{"github-copilot-developer", "GitHub Copilot CLI"},
		{"Cline", "cline"},
		{"inspector-cli", "MCP Inspector"},
		{" mcp-inspector ", "MCP Inspector"},
		{"", Unknown.Name},
		{"curl", Unknown.Name},
		{"claude", Unknown.Name}, // a prefix of an id is not the id
	} {
		if got := Lookup(c.name).Name; got != c.want {
			t.Errorf("Lookup(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		client string
		chars  int // --output-budget
		want   Budget
	}{
		{"curl", 0, Budget{Chars: 30_000, File: 46_000}},
		{"claude-code", 0, Budget{Chars: 30_000, File: 98_000}},
		{"codex-mcp-client", 0, Budget{Chars: 30_000, File: 46_000}},
		{"github-copilot-developer", 0, Budget{Chars: 18_000, File: 18_000}},
		{"opencode", 0, Budget{Chars: 30_000, File: 48_000, Lines: 1_980}},
		{"github-copilot-developer", 50_000, Budget{Chars: 50_000, File: 50_000}},
		{"curl", 8_000, Budget{Chars: 8_000, File: 8_000}},
	} {
		if got := Lookup(c.client).Budget(c.chars); got != c.want {
			t.Errorf("Lookup(%q).Budget(%d) = %+v, want %+v", c.client, c.chars, got, c.want)
		}
	}
}

// TestProfilesFit: every profile names itself, has an id, leaves room for the notes in
// what it allows, and answers within a hard timer with time to spare.
func TestProfilesFit(t *testing.T) {
	t.Parallel()
	for _, p := range Profiles {
		if p.Name == "" || len(p.IDs) == 0 || p.Measured == "" {
			t.Errorf("%+v: want a name, ids and how it was measured", p)
		}
		if p.Chars != 0 && p.Chars < 4*NotesChars || p.Lines != 0 && p.Lines < 4*NotesLines {
			t.Errorf("%s: limits %d characters, %d lines leave too little besides the notes", p.Name, p.Chars, p.Lines)
		}
		if p.Deadline != 0 && p.Deadline < 10*time.Second {
			t.Errorf("%s: deadline %v is too short to answer before", p.Name, p.Deadline)
		}
		for _, id := range p.IDs {
			if got := Lookup(id); got.Name != p.Name {
				t.Errorf("Lookup(%q) = %s, want %s (an earlier profile's id is its prefix)", id, got.Name, p.Name)
			}
		}
	}
}
