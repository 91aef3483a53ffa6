package codex

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

// sessionID returns the session ID that the output of step i named.
func sessionID(t *testing.T, i int) func([]string) map[string]any {
	return func(results []string) map[string]any {
		m := regexp.MustCompile(`Process running with session ID (\d+)`).FindStringSubmatch(results[i])
		if m == nil {
			t.Errorf("step %d named no session ID:\n%s", i, results[i])
			return map[string]any{"session_id": 0}
		}
		n, _ := strconv.Atoi(m[1])
		return map[string]any{"session_id": n, "yield_time_ms": 20000}
	}
}

// TestCodexFace drives the --tools codex face over STDIO: Codex's own tool
// names, parameters and result wording.
func TestCodexFace(t *testing.T) {
	t.Parallel()
	dir := testutil.Files(t, map[string]string{"a.txt": "alpha\nbeta\n", "b.txt": "one\ntwo\n", "gone.txt": "bye\n"})
	failing := "*** Begin Patch\n*** Update File: a.txt\n@@\n-beta\n+BETA\n*** Add File: c.txt\n+new\n*** Update File: b.txt\n@@\n-three\n+THREE\n*** Delete File: gone.txt\n*** End Patch"
	good := strings.Replace(failing, "-three\n+THREE", "-two\n+TWO", 1)
	m, url := newFakeModel(t,
		call("exec_command", map[string]any{"cmd": "echo hello-from-codex; echo to-stderr >&2; exit 3"}),
		call("exec_command", map[string]any{"cmd": "sleep 2; echo woke-up", "yield_time_ms": 250, "sandbox_permissions": "require_escalated", "justification": "ok?"}),
		toolCall{Name: "write_stdin", ArgsFrom: sessionID(t, 1)},
		call("exec_command", map[string]any{"cmd": `if [ -t 0 ]; then echo tty=yes; else echo tty=no; fi; printf 'name? '; read n; echo "hello $n"`, "tty": true}),
		toolCall{Name: "write_stdin", ArgsFrom: func(r []string) map[string]any {
			args := sessionID(t, 3)(r)
			args["chars"] = "codex\n"
			return args
		}},
		call("apply_patch", map[string]any{"input": failing}),
		call("apply_patch", map[string]any{"input": good}),
	)
	runCodex(t, url, unknownModel, stdioServer(t, dir, "--tools", "codex"), nil, 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "Process exited with code 3", "hello-from-codex", "to-stderr")
	wantResult(t, m, 1, "Process running with session ID")
	wantResult(t, m, 2, "Process exited with code 0", "woke-up")
	wantResult(t, m, 3, "tty=yes", "name? ", "Process running with session ID")
	wantResult(t, m, 4, "hello codex", "Process exited with code 0")
	wantResult(t, m, 5, "apply_patch verification failed", "Failed to find expected lines in b.txt", "hunk 1 of 1", "No file was changed")
	wantResult(t, m, 6, "Success. Updated the following files:", "A c.txt", "M a.txt", "M b.txt", "D gone.txt")
	wantFiles(t, dir, map[string]string{"a.txt": "alpha\nBETA\n", "b.txt": "one\nTWO\n", "c.txt": "new\n", "gone.txt": ""})
}

// TestCodexFaceFailingPatchChangesNothing stops after a patch whose last hunk
// fails: the files before it must be as they were.
func TestCodexFaceFailingPatchChangesNothing(t *testing.T) {
	t.Parallel()
	before := map[string]string{"a.txt": "alpha\nbeta\n", "b.txt": "one\ntwo\n", "gone.txt": "bye\n"}
	dir := testutil.Files(t, before)
	m, url := newFakeModel(t, call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-beta\n+BETA\n*** Add File: c.txt\n+new\n*** Delete File: gone.txt\n*** Update File: b.txt\n@@\n-three\n+THREE\n*** End Patch"}))
	runCodex(t, url, unknownModel, stdioServer(t, dir, "--tools", "codex"), nil, 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "file section 4 of 4", "No file was changed")
	wantFiles(t, dir, before)
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Errorf("c.txt was created by a patch that failed")
	}
}

func TestSTDIO(t *testing.T) {
	t.Parallel()
	dir := testutil.Files(t, map[string]string{"notes.txt": "first line\nsecond line from notes\n"})
	m, url := newFakeModel(t,
		call("bash", map[string]any{"command": "echo hello-from-boris"}),
		call("view", map[string]any{"path": "notes.txt"}),
	)
	runCodex(t, url, unknownModel, stdioServer(t, dir), nil, 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "hello-from-boris")
	wantResult(t, m, 1, "second line from notes")
}

func TestHTTPToken(t *testing.T) {
	t.Parallel()
	dir := testutil.Files(t, nil)
	m, url := newFakeModel(t,
		call("bash", map[string]any{"command": "echo hello-over-http"}),
		call("bash", map[string]any{"command": "mkdir -p sub && cd sub && export BORIS_E2E_MARK=kept"}),
		call("bash", map[string]any{"command": `pwd; echo "mark=$BORIS_E2E_MARK"`}),
	)
	server, env := httpServer(t, dir)
	runCodex(t, url, unknownModel, server, env, 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "hello-over-http")
	wantResult(t, m, 2, filepath.Join(dir, "sub")+"\n", "mark=kept")
}

// TestCodexFaceHTTP drives the codex face over HTTP with a token.
func TestCodexFaceHTTP(t *testing.T) {
	t.Parallel()
	dir := testutil.Files(t, map[string]string{"x.txt": "x\n"})
	m, url := newFakeModel(t,
		call("exec_command", map[string]any{"cmd": "cat x.txt; echo over-http"}),
		call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: x.txt\n@@\n-x\n+y\n*** End Patch"}),
	)
	server, env := httpServer(t, dir, "--tools", "codex")
	runCodex(t, url, unknownModel, server, env, 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "Process exited with code 0", "over-http")
	wantResult(t, m, 1, "M x.txt")
	wantFiles(t, dir, map[string]string{"x.txt": "y\n"})
}

// TestLongResult prints more than a Codex model keeps of a tool output, cut
// from the middle and marked "…N tokens truncated…": about 12,000 characters
// for a model Codex does not know, and what its exec tool keeps (10,000
// tokens) for its current default model, which calls MCP tools from
// JavaScript. What the model reads must still say, for each stream, that part
// of it was left out and which file holds all of it, and keep the stderr
// label.
func TestLongResult(t *testing.T) {
	t.Parallel()
	script := `for i in $(seq 1 3000); do echo "out line $i of the long stdout"; done; echo STDOUT-END
for i in $(seq 1 3000); do echo "err line $i of the long stderr" >&2; done; echo STDERR-END >&2`
	for _, tc := range []struct {
		model, tools string
		call         toolCall
	}{
		{unknownModel, "boris", call("bash", map[string]any{"command": script})},
		{defaultModel, "boris", call("bash", map[string]any{"command": script})},
		{unknownModel, "codex", call("exec_command", map[string]any{"cmd": script})},
	} {
		t.Run(tc.model+"/"+tc.tools, func(t *testing.T) {
			t.Parallel()
			dir := testutil.Files(t, nil)
			m, url := newFakeModel(t, tc.call)
			m.codeMode = tc.model == defaultModel
			runCodex(t, url, tc.model, stdioServer(t, dir, "--tools", tc.tools), nil, 3*time.Minute).wantClean(t)
			r, _ := m.result(0)
			t.Logf("the model read %d characters", len(r))
			wantResult(t, m, 0, "stderr", "STDERR-END")
			for _, stream := range []string{"stdout", "stderr"} {
				if !regexp.MustCompile(`\.` + stream + `\b`).MatchString(r) {
					t.Errorf("the model was not told which file holds all of %s", stream)
				}
			}
			if n := len(regexp.MustCompile(`(?i)\d[\d,]* (characters|lines|bytes) (omitted|left out)`).FindAllString(r, -1)); n < 2 {
				t.Errorf("the model was told of %d parts left out, want one for each stream", n)
			}
			if t.Failed() {
				t.Logf("what the model read:\n%s", r)
			}
		})
	}
}

// TestLongCall runs a silent command for longer than a minute over HTTP.
func TestLongCall(t *testing.T) {
	if testing.Short() || os.Getenv("BORIS_E2E_SKIP_LONG") == "1" {
		t.Skip("a 65 s call; skipped with -short or BORIS_E2E_SKIP_LONG=1")
	}
	t.Parallel()
	dir := testutil.Files(t, nil)
	m, url := newFakeModel(t, call("bash", map[string]any{"command": "sleep 65; echo long-call-done", "timeout": 120000}))
	server, env := httpServer(t, dir)
	runCodex(t, url, unknownModel, server+"tool_timeout_sec = 120\n", env, 4*time.Minute).wantClean(t)
	wantResult(t, m, 0, "long-call-done")
}

// TestCodexFaceDefaultModel calls the codex face as Codex's default model
// does, from JavaScript run by Codex's exec tool.
func TestCodexFaceDefaultModel(t *testing.T) {
	t.Parallel()
	dir := testutil.Files(t, map[string]string{"a.txt": "alpha\n"})
	m, url := newFakeModel(t,
		call("exec_command", map[string]any{"cmd": "echo from-code-mode"}),
		call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch"}),
	)
	m.codeMode = true
	runCodex(t, url, defaultModel, stdioServer(t, dir, "--tools", "codex"), nil, 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "Process exited with code 0", "from-code-mode")
	wantResult(t, m, 1, "M a.txt")
	wantFiles(t, dir, map[string]string{"a.txt": "ALPHA\n"})
}
