package tools_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/clients"
	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/tools"
)

// connectAs is connect for a client that names itself name, reading results as text.
func connectAs(t *testing.T, cfg config.Config, name string) *mcp.ClientSession {
	t.Helper()
	srv, err := server.New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), os.Environ())
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	t.Cleanup(srv.Close)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func textConfig(t *testing.T) config.Config {
	cfg := testConfig(t)
	cfg.StructuredOutput = false // the model reads the text
	return cfg
}

// TestLongOutputFitsEachClient: for each client, a long output comes back within what
// the client passes whole, in characters and in lines, so that the notes on what was left
// out, at the start and at the end of the result, reach the model.
func TestLongOutputFitsEachClient(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"opencode", "github-copilot-developer", "codex-mcp-client", "claude-code", "someone-else"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := clients.Lookup(name)
			cs := connectAs(t, textConfig(t), name)
			for _, cmd := range []string{"seq 1 200000", "seq 1 200000 >&2; seq 1 5000"} {
				got := textOf(call(t, cs, "bash", map[string]any{"command": cmd}))
				chars, lines := utf8.RuneCountInString(got), strings.Count(got, "\n")
				if p.Chars > 0 && chars > p.Chars || p.Lines > 0 && lines > p.Lines {
					t.Errorf("%s: %d characters, %d lines; %s passes %d characters, %d lines", cmd, chars, lines, p.Name, p.Chars, p.Lines)
				}
				if p.Chars == 0 && chars > clients.DefaultChars+clients.NotesChars {
					t.Errorf("%s: %d characters, over the default budget and its notes", cmd, chars)
				}
				all := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
				if p.Lines > 0 {
					all = all[:min(p.Lines, len(all))] // what the client keeps
				}
				start, end := all[:min(4, len(all))], all[max(len(all)-4, 0):]
				for _, part := range [][]string{start, end} {
					if !slices.ContainsFunc(part, func(l string) bool { return strings.HasPrefix(l, "cut: ") && strings.Contains(l, "Read them with") }) {
						t.Errorf("%s: lines %q, want a note saying what was left out, at both ends of what the client keeps:\n%s", cmd, part, head(got))
					}
				}
			}
		})
	}
}

// TestTaskOutputFitsLines: every read of a background task's output, both streams long,
// fits the lines a client keeps.
func TestTaskOutputFitsLines(t *testing.T) {
	t.Parallel()
	p := clients.Lookup("opencode")
	cs := connectAs(t, textConfig(t), "opencode")
	started := textOf(call(t, cs, "bash", map[string]any{"command": "seq 1 200000 >&2; seq 1 5000", "run_in_background": true}))
	id := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(started)
	if id == nil {
		t.Fatalf("no task id in %q", started)
	}
	// Until the task ends (no line matches), so that the one read has both streams whole:
	// a command's having written its output does not mean Boris has read it all yet.
	got := textOf(call(t, cs, "task_output", map[string]any{"task_id": id[1], "wait_ms": 60000, "until": "^no line is this$"}))
	if !strings.Contains(got, "status: exited 0") {
		t.Fatalf("task_output did not wait for the task to end:\n%s", head(got))
	}
	if n := strings.Count(got, "\n"); n > p.Lines || !strings.Contains(got, "cut: stderr") || !strings.Contains(got, "cut: stdout") {
		t.Fatalf("task_output: %d lines, want both streams cut to within the %d opencode keeps:\n%s", n, p.Lines, head(got))
	}
}

func head(s string) string {
	if len(s) > 600 {
		return s[:300] + "\n…\n" + s[len(s)-300:]
	}
	return s
}

// TestOutputOf29000CharactersComesBackWhole: with the default budget, an output of 29,000
// characters and its labels come back whole.
func TestOutputOf29000CharactersComesBackWhole(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"someone-else", "claude-code", "codex-mcp-client"} {
		cs := connectAs(t, textConfig(t), name)
		got := textOf(call(t, cs, "bash", map[string]any{"command": "head -c 29000 /dev/zero | tr '\\0' x"}))
		if !strings.Contains(got, strings.Repeat("x", 29_000)) || strings.Contains(got, "omitted") {
			t.Errorf("%s: 29,000 characters of output came back cut:\n%s", name, head(got))
		}
	}
}

// TestViewShows2000ShortLines: a view of a long file of short lines shows its first 2,000
// lines, as Claude Code's own Read does, where the client passes them whole; a client
// that keeps 2,000 lines gets fewer, with the note within them.
func TestViewShows2000ShortLines(t *testing.T) {
	t.Parallel()
	var file strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&file, "line %d\n", i)
	}
	for _, c := range []struct {
		name string
		want string
	}{
		{"someone-else", "Showed lines 1-2000"},
		{"claude-code", "Showed lines 1-2000"},
		{"codex-mcp-client", "Showed lines 1-2000"},
		{"opencode", "Showing lines 1-1980"},
	} {
		cfg := textConfig(t)
		if err := os.WriteFile(filepath.Join(cfg.Workdir, "short.txt"), []byte(file.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cs := connectAs(t, cfg, c.name)
		got := textOf(call(t, cs, "view", map[string]any{"path": "short.txt"}))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: view of 3,000 short lines, want %q:\n%s", c.name, c.want, head(got))
		}
		if c.want == "Showed lines 1-2000" && !strings.Contains(got, "  2000\tline 2000\n") {
			t.Errorf("%s: line 2000 not shown:\n%s", c.name, head(got))
		}
		if p := clients.Lookup(c.name); p.Lines > 0 && strings.Count(got, "\n") > p.Lines {
			t.Errorf("%s: %d lines, over the %d the client keeps", c.name, strings.Count(got, "\n"), p.Lines)
		}
	}
}

// TestHardTimerClientGetsATask: a client whose call timer cannot be extended (cline's,
// the Agents SDK's, the Inspector's 60 s; here made short) gets a long command's task id
// before its timer fires, and can read the command's output from it; a client Boris
// knows no such timer of waits for the command.
func TestHardTimerClientGetsATask(t *testing.T) {
	tools.ShortenProfileDeadlines(t, 2*time.Second) // the command moves at 1 s
	for _, name := range []string{"Cline", "inspector-cli", "stdio: boris"} {
		cs := connectAs(t, textConfig(t), name)
		got := textOf(call(t, cs, "bash", map[string]any{"command": "echo started; sleep 30; echo done"}))
		id := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(got)
		if id == nil || !strings.Contains(got, "goes on in the background") || !strings.Contains(got, "started") {
			t.Errorf("%s: got %q, want a task id, the output so far and how to follow it", name, got)
			continue
		}
		if res := call(t, cs, "task_kill", map[string]any{"task_id": id[1]}); res.IsError {
			t.Errorf("%s: task_kill: %s", name, textOf(res))
		}
	}
	cs := connectAs(t, textConfig(t), "claude-code")
	if got := textOf(call(t, cs, "bash", map[string]any{"command": "sleep 1.5; echo done"})); !strings.Contains(got, "done") || strings.Contains(got, "task_id") {
		t.Errorf("claude-code: got %q, want the command's whole result", got)
	}
}
