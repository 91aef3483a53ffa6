// Package clients drives the built Boris binary through six more MCP clients — Gemini
// CLI, Qwen Code, opencode, the OpenAI Agents SDK for JavaScript, Copilot CLI and cline —
// over STDIO and over HTTP, each with its default settings and a fake model API on
// 127.0.0.1 in place of the model. The clients (and the Node.js 22 some of them need) are
// pinned in package.json here; install them with `npm ci --prefix e2e/clients`. Without
// them the tests skip, unless the client's variable (BORIS_E2E_GEMINI=1, …) is set,
// which makes a missing client a failure.
package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
	"github.com/mjkoo/boris/internal/testutil"
)

const needs = "it installs Node.js 22 for the clients that need it"

var (
	geminiCLI   = &clitest.CLI{Name: "Gemini", Command: "gemini", Dir: "e2e/clients", Require: "BORIS_E2E_GEMINI", Version: "0.61.0", Needs: needs}
	qwenCLI     = &clitest.CLI{Name: "Qwen Code", Command: "qwen", Dir: "e2e/clients", Require: "BORIS_E2E_QWEN", Version: "0.24.4", Needs: needs}
	opencodeCLI = &clitest.CLI{Name: "opencode", Command: "opencode", Dir: "e2e/clients", Require: "BORIS_E2E_OPENCODE", Version: "1.18.33", Needs: needs}
	copilotCLI  = &clitest.CLI{Name: "Copilot", Command: "copilot", Dir: "e2e/clients", Require: "BORIS_E2E_COPILOT", Version: "1.0.102", Needs: needs}
	clineCLI    = &clitest.CLI{Name: "cline", Command: "cline", Dir: "e2e/clients", Require: "BORIS_E2E_CLINE", Version: "3.0.65", Needs: needs}
	// The Agents SDK is a library: its "CLI" is Node.js running agents.mjs here.
	agentsCLI = &clitest.CLI{Name: "OpenAI Agents SDK", Command: "node", Dir: "e2e/clients", Require: "BORIS_E2E_AGENTS", Version: "v22.", Needs: needs}
)

func TestMain(m *testing.M) {
	// The clients run on the Node.js installed next to them, which some need (22 or
	// later), rather than whatever node is on PATH.
	if bin, err := filepath.Abs(filepath.Join("node_modules", ".bin")); err == nil {
		if _, err := os.Stat(bin); err == nil {
			os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
	}
	clitest.Main(m, geminiCLI, qwenCLI, opencodeCLI, copilotCLI, clineCLI, agentsCLI)
}

// server is how a client reaches Boris: over STDIO (Command, Args) or HTTP (URL, Token).
type server struct {
	Command string
	Args    []string
	URL     string
	Token   string
	// Received is the file where, over STDIO, every message the client sent to Boris
	// is kept.
	Received string
}

func (s server) stdio() bool { return s.URL == "" }

// startBoris starts Boris in dir for a client to reach over transport ("stdio" or
// "http").
func startBoris(t *testing.T, transport, dir string, flags ...string) server {
	t.Helper()
	if transport == "http" {
		url, token := clitest.ServeHTTP(t, dir, flags...)
		return server{URL: url, Token: token}
	}
	// A shell in front of Boris keeps what the client sends, to read its clientInfo.
	received := filepath.Join(t.TempDir(), "received.jsonl")
	wrapper := filepath.Join(t.TempDir(), "boris-stdio")
	script := fmt.Sprintf("#!/bin/sh\ntee -a %q | %q \"$@\"\n", received, clitest.Boris(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return server{
		Command:  wrapper,
		Args:     append([]string{"--transport", "stdio", "--workdir", dir}, flags...),
		Received: received,
	}
}

// clientInfo returns the clientInfo the client sent over STDIO (in initialize or in a
// request's _meta) and the protocol version it asked for.
func (s server) clientInfo(t *testing.T) (info, version string) {
	t.Helper()
	f, err := os.Open(s.Received)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string          `json:"protocolVersion"`
				ClientInfo      json.RawMessage `json:"clientInfo"`
				Meta            struct {
					ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
					ClientInfo      json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		if msg.Method == "initialize" {
			return string(msg.Params.ClientInfo), msg.Params.ProtocolVersion
		}
		if msg.Params.Meta.ClientInfo != nil {
			return string(msg.Params.Meta.ClientInfo), msg.Params.Meta.ProtocolVersion
		}
	}
	return "", ""
}

// runCLI runs a client's command line until it exits or timeout passes, and returns its
// stdout and stderr.
func runCLI(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		t.Errorf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// wantFinal checks that the client's output carries the model's final answer.
func wantFinal(t *testing.T, stdout, stderr string) {
	t.Helper()
	if !strings.Contains(stdout, clitest.FinalText) {
		t.Errorf("the client did not end with %q\nstdout:\n%s\nstderr:\n%s", clitest.FinalText, stdout, stderr)
	}
}

// borisTools are the tools every client must list.
var borisTools = []string{"bash", "view", "str_replace", "create_file", "grep", "find", "task_input", "task_output", "task_kill", "task_list"}

// wantTools checks that the client offered the model every tool of Boris.
func wantTools(t *testing.T, m *clitest.Model) {
	t.Helper()
	offered := m.Offered()
	for _, tool := range borisTools {
		if !slices.ContainsFunc(offered, func(name string) bool {
			return name == tool || strings.Contains(name, "boris") && (strings.HasSuffix(name, "_"+tool) || strings.HasSuffix(name, "-"+tool))
		}) {
			t.Errorf("the client did not offer %s; it offered %v", tool, offered)
		}
	}
}

// check is the quick set of calls every client makes, over each transport, and what
// the model must read of each.
type check struct {
	files  map[string]string
	script []clitest.Call
	verify func(t *testing.T, m *clitest.Model, dir string)
}

const longScript = `seq -f 'out line %g' 1 8000; echo STDOUT-END
for i in $(seq 1 3000); do echo "err line $i" >&2; done; echo STDERR-END >&2`

var quick = check{
	files: map[string]string{"notes.txt": "first line\nsecond line from notes\n"},
	script: []clitest.Call{
		{Tool: "bash", Args: map[string]any{"command": "echo to-stdout; echo to-stderr >&2; exit 3"}},
		{Tool: "view", Args: map[string]any{"path": "notes.txt"}},
		{Tool: "str_replace", Args: map[string]any{"path": "notes.txt", "old_str": "second line", "new_str": "2nd line"}},
		{Tool: "create_file", Args: map[string]any{"path": "sub/new.txt", "content": "created here\n"}},
		{Tool: "grep", Args: map[string]any{"pattern": "2nd line"}},
		{Tool: "find", Args: map[string]any{"pattern": "*.txt"}},
		{Tool: "view", Args: map[string]any{"path": "missing.txt"}},
		{Tool: "bash", Args: map[string]any{"command": `read -p 'Name? ' name; echo "hello $name"`, "tty": true}},
		{Tool: "task_input", Args: map[string]any{"task_id": "task-1", "input": "Ada\n"}},
		{Tool: "bash", Args: map[string]any{"command": longScript}},
	},
	verify: func(t *testing.T, m *clitest.Model, dir string) {
		wantTools(t, m)
		m.WantResult(t, 0, "to-stdout", "to-stderr", "3")
		m.WantResult(t, 1, "second line from notes")
		m.WantResult(t, 3, "sub/new.txt")
		m.WantResult(t, 4, "notes.txt")
		m.WantResult(t, 5, "notes.txt", "new.txt")
		m.WantReadable(t, 6, "missing.txt does not exist")
		m.WantResult(t, 7, "task-1", "Name?")
		m.WantResult(t, 8, "hello Ada")
		wantLong(t, m, 9)
		wantFiles(t, dir, map[string]string{"notes.txt": "first line\n2nd line from notes\n", "sub/new.txt": "created here\n"})
	},
}

// wantLong checks that the model read, of a long output, Boris's note of what it left
// out (with the file that holds all of it) and the tail of each stream.
func wantLong(t *testing.T, m *clitest.Model, i int) {
	t.Helper()
	m.WantResult(t, i, "STDOUT-END", "STDERR-END")
	r, _ := m.Result(i)
	t.Logf("of the long output the model read %d characters, %d lines", len(r), strings.Count(r, "\n"))
	if n := len(regexp.MustCompile(`(?i)\d[\d,]* (characters|lines|bytes) (omitted|left out)`).FindAllString(r, -1)); n < 2 {
		t.Errorf("the model was told of %d parts left out, want one for each stream", n)
	}
	for _, stream := range []string{"stdout", "stderr"} {
		if !regexp.MustCompile(`\.` + stream + `\b`).MatchString(r) {
			t.Errorf("the model was not told which file holds all of %s", stream)
		}
	}
}

// wantFiles checks the files under dir (name → content).
func wantFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// client runs one headless turn of a client against the fake model m with Boris
// reachable as srv, in its own home directory, and checks that it ended with the
// model's final answer.
type client func(t *testing.T, m *clitest.Model, srv server)

// runQuick runs the quick set through c over both transports, with a model that sends
// null for every optional parameter a call leaves out when nulls is set.
func runQuick(t *testing.T, cli *clitest.CLI, c client, nulls bool, transports ...string) {
	t.Parallel()
	if len(transports) == 0 {
		transports = []string{"stdio", "http"}
	}
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			cli.Path(t)
			dir := testutil.Files(t, quick.files)
			m := clitest.NewModel(t, quick.script...)
			m.Nulls = nulls
			srv := startBoris(t, transport, dir)
			c(t, m, srv)
			if srv.stdio() {
				info, version := srv.clientInfo(t)
				t.Logf("clientInfo %s, protocol version %s", info, version)
			}
			t.Logf("a result as the model read it:\n%s", m.Raw(0))
			t.Logf("an error as the model read it:\n%s", m.Raw(6))
			quick.verify(t, m, dir)
		})
	}
}

// longCall is a silent command that runs for longer than a client's 60-second timer,
// and then a call that waits (less than the timer) for the file it writes at its end.
var longCall = []clitest.Call{
	{Tool: "bash", Args: map[string]any{"command": "sleep 65; echo long-call-done > done.txt; echo long-call-done", "timeout": 120000}},
	{Tool: "bash", Args: map[string]any{"command": "for i in $(seq 1 50); do [ -f done.txt ] && break; sleep 1; done; cat done.txt"}},
}

// runLongCall makes a call longer than the client's timer, over both transports: its
// result, or a task id and how to read it, must reach the model, and the command must
// run to its end.
func runLongCall(t *testing.T, cli *clitest.CLI, c client) {
	if testing.Short() || os.Getenv("BORIS_E2E_SKIP_LONG") == "1" {
		t.Skip("a 65 s call; skipped with -short or BORIS_E2E_SKIP_LONG=1")
	}
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cli.Path(t)
			t.Parallel()
			dir := testutil.Files(t, nil)
			m := clitest.NewModel(t, longCall...)
			c(t, m, startBoris(t, transport, dir))
			r, _ := m.Result(0)
			if !strings.Contains(r, "long-call-done") && !(regexp.MustCompile(`task-\d+`).MatchString(r) && strings.Contains(r, "task_output")) {
				t.Errorf("the model read neither the long call's result nor a task id and how to read it:\n%s", r)
			}
			m.WantResult(t, 1, "long-call-done")
		})
	}
}
