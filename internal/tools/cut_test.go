package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mjkoo/boris/internal/clients"
	"github.com/mjkoo/boris/internal/testutil"
)

// middleCut cuts s as Codex cuts a tool result longer than limit characters: it keeps the
// first and last halves of the limit and puts a marker of its own in between. A result
// that fits is both sides whole.
func middleCut(s string, limit int) (head, tail string) {
	r := []rune(s)
	if len(r) <= limit {
		return s, s
	}
	return string(r[:limit/2]), string(r[len(r)-limit/2:])
}

// Limits of the known clients that cut a long result from the middle: Codex with its
// current models, and with a model it does not know.
var clientCuts = []int{48_000, 12_000}

// TestResultsSurviveMiddleCut: a bash and a task_output result with both streams long and
// a default view of a long file each fit the default budget, and cut from the middle as Codex cuts them,
// still say what was left out and where the full text is, and every line of output that
// survives still reads as the stream it came from.
func TestResultsSurviveMiddleCut(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.StructuredOutput = false // the model reads the text
	var file strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&file, "line %d %s\n", i, strings.Repeat("x", 40))
	}
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "big.txt"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	const both = "for i in $(seq 1 2000); do echo \"out $i 0000000000000000000000000000000000000000\"; echo \"err $i 0000000000000000000000000000000000000000\" >&2; done"
	bash := textOf(call(t, cs, "bash", map[string]any{"command": both}))
	view := textOf(call(t, cs, "view", map[string]any{"path": "big.txt"}))
	printed := filepath.Join(t.TempDir(), "printed")
	testutil.Fifo(t, printed)
	started := textOf(call(t, cs, "bash", map[string]any{"command": both + "; echo > " + printed, "run_in_background": true}))
	id := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(started)[1]
	testutil.ReadFifo(t, printed)
	task := textOf(call(t, cs, "task_output", map[string]any{"task_id": id}))
	for name, got := range map[string]string{"bash": bash, "view": view, "task_output": task} {
		// Within what Codex passes whole: the budget of a view, the largest, and its notes.
		if n, limit := utf8.RuneCountInString(got), clients.DefaultFileChars+clients.NotesChars; n > limit {
			t.Errorf("%s returned %d characters, over the %d budget", name, n, limit)
		}
	}
	cutNote := regexp.MustCompile(`(?m)^cut: (stdout|stderr): \d+ characters omitted \(lines \d+-\d+ of (\S+)\)\. Read them with view \(path \S+, view_range \[\d+, \d+\]\)`)
	viewNote := regexp.MustCompile(`(?m)^\[Showing lines 1-\d+ \(output budget \d+ characters\); continue with view_range \[\d+, \d+\]\]$`)
	for _, limit := range clientCuts {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			for _, result := range []string{bash, task} {
				head, tail := middleCut(result, limit)
				for _, part := range []string{head, tail} {
					found := map[string]bool{}
					for _, m := range cutNote.FindAllStringSubmatch(part, -1) {
						found[m[1]] = true
						if _, err := os.Stat(m[2]); err != nil {
							t.Errorf("the cut note names %s: %v", m[2], err)
						}
					}
					if !found["stdout"] || !found["stderr"] {
						t.Errorf("cut at %d, a side keeps cut notes for %v, want stdout and stderr:\n%.600s", limit, found, part)
					}
				}
				checkLabels(t, head, tail)
			}
			vh, vt := middleCut(view, limit)
			if !viewNote.MatchString(vh) || !viewNote.MatchString(vt) {
				t.Errorf("cut at %d, the view note is not on both sides:\n%.300s\n...\n%s", limit, vh, vt[max(len(vt)-300, 0):])
			}
		})
	}
}

// checkLabels checks that each output line ("out N" or "err N") left on either side of a
// middle cut reads as its own stream: before the cut by the last label above it, after
// the cut by the first label below it.
func checkLabels(t *testing.T, head, tail string) {
	t.Helper()
	stream := map[string]string{"out": "stdout", "err": "stderr"}
	label := ""
	for line := range strings.Lines(head) {
		line = strings.TrimSuffix(line, "\n")
		if line == "stdout:" || line == "stderr:" {
			label = strings.TrimSuffix(line, ":")
		}
		if k, _, ok := strings.Cut(line, " "); ok && stream[k] != "" && stream[k] != label {
			t.Fatalf("before the cut, %q reads as %q", line, label)
		}
	}
	lines := strings.Split(tail, "\n")
	label = ""
	for i := len(lines) - 1; i >= 0; i-- {
		if m := regexp.MustCompile(`^\[end of (stdout|stderr)\]$`).FindStringSubmatch(lines[i]); m != nil {
			label = m[1]
		}
		if k, _, ok := strings.Cut(lines[i], " "); ok && stream[k] != "" && stream[k] != label {
			t.Fatalf("after the cut, %q reads as %q", lines[i], label)
		}
	}
}
