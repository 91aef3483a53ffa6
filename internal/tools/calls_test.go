package tools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mjkoo/boris/internal/config"
)

// TestCalls runs the tool-call scripts in testdata/calls and compares every result with
// the one written after its call. Each archive is one session against a fresh workspace:
//
//   - The comment says what the file pins, then holds directives, one a line:
//     "flags: --allow-dir=$WORKDIR --anthropic-compat" are command-line flags as boris takes
//     them; "shell: /bin/sh" replaces the shell commands run with; "run: ln -s a b" runs a
//     bash command in the work directory once the files are written, before the server
//     starts; "scrub: REGEXP -> TEXT" replaces, in every result, the text each match's
//     first group holds (or the whole match) by TEXT, for what no two runs share;
//     "landlock: N" skips the script where the kernel's Landlock ABI is below N.
//   - Files before the first call are the workspace, named relative to the work directory,
//     or under $OUTSIDE/ for a directory next to it that is not the work directory. Their
//     modification times follow archive order, the first oldest, so "newest first" has a
//     known answer; directories are older than all files, and "run" lines come after
//     the files are written (use touch -d for a time of their own).
//   - "call N: TOOL" holds the arguments as JSON. $WORKDIR, $OUTSIDE and, once a result
//     has named it, $SPILL (the session's directory for saved output) are replaced by
//     their paths, in arguments and flags as in results; so are $ID1, $ID2, ... for the
//     random part of the names of files in $SPILL, in the order results name them.
//     Results show any other path in the temporary directory under $TMPDIR.
//   - "result N" is the text of a successful result; "error N: CODE" that of an isError
//     result with its _meta code; "protocol error N" a call the protocol refused.
//     "structured N" follows with the structuredContent when there is one (without
//     duration_ms), as that is what some clients give the model instead of the text.
//     Result text normally ends with a newline and error text does not: "(no newline at
//     end)" on a result section and "(newline at end)" on an error section mark the
//     exceptions.
//
// go test ./internal/tools -update rewrites every expected section from the current code.
func TestCalls(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "calls", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/calls/*.txtar")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runCallScript(t, file)
		})
	}
}

// callScript is a parsed testdata/calls archive.
type callScript struct {
	comment []byte
	files   []txtar.File // the workspace
	calls   []scriptCall
}

type scriptCall struct {
	tool string
	args []byte // as written, before substitution
	want []txtar.File
}

var (
	callName   = regexp.MustCompile(`^call (\d+): (\S+)$`)
	resultName = regexp.MustCompile(`^(result|error|protocol error|structured) (\d+)(: [A-Z_]+)?( \((no )?newline at end\))?$`)
)

func parseCallScript(data []byte) (*callScript, error) {
	a := txtar.Parse(data)
	s := &callScript{comment: a.Comment}
	for _, f := range a.Files {
		if m := callName.FindStringSubmatch(f.Name); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != len(s.calls)+1 {
				return nil, fmt.Errorf("%q: calls are numbered from 1 in order, want call %d", f.Name, len(s.calls)+1)
			}
			s.calls = append(s.calls, scriptCall{tool: m[2], args: f.Data})
			continue
		}
		if m := resultName.FindStringSubmatch(f.Name); m != nil {
			if n, _ := strconv.Atoi(m[2]); n != len(s.calls) {
				return nil, fmt.Errorf("%q does not follow call %s", f.Name, m[2])
			}
			c := &s.calls[len(s.calls)-1]
			c.want = append(c.want, f)
			continue
		}
		if len(s.calls) > 0 {
			return nil, fmt.Errorf("%q: workspace files come before the first call (or is it a misspelt section?)", f.Name)
		}
		s.files = append(s.files, f)
	}
	return s, nil
}

// directives are the settings in a script's comment.
type directives struct {
	flags    []string
	shell    string
	run      []string
	scrubs   []scrub
	landlock int // the Landlock ABI the script needs
}

type scrub struct {
	re   *regexp.Regexp
	repl string
}

// apply replaces, in each match of sc.re in s, the first group's text (or the whole
// match when the expression has no group) by sc.repl, taken literally.
func (sc scrub) apply(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range sc.re.FindAllStringSubmatchIndex(s, -1) {
		i, j := m[0], m[1]
		if len(m) > 2 && m[2] >= 0 {
			i, j = m[2], m[3]
		}
		b.WriteString(s[last:i])
		b.WriteString(sc.repl)
		last = j
	}
	b.WriteString(s[last:])
	return b.String()
}

func parseDirectives(comment []byte) (directives, error) {
	var d directives
	for _, line := range strings.Split(string(comment), "\n") {
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "flags":
			d.flags = append(d.flags, strings.Fields(val)...)
		case "shell":
			d.shell = val
		case "landlock":
			abi, err := strconv.Atoi(val)
			if err != nil {
				return d, fmt.Errorf("landlock %q: want an ABI version", val)
			}
			d.landlock = abi
		case "run":
			d.run = append(d.run, val)
		case "scrub":
			expr, repl, ok := strings.Cut(val, " -> ")
			if !ok {
				return d, fmt.Errorf("scrub %q: want REGEXP -> TEXT", val)
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return d, fmt.Errorf("scrub %q: %v", val, err)
			}
			d.scrubs = append(d.scrubs, scrub{re, repl})
		}
	}
	return d, nil
}

// paths are the directories a script's text names with variables.
type paths struct {
	workdir, outside, spill string
	ids                     []string // random parts of saved output's file names: $ID1, $ID2, ...
}

// expand replaces the variables in s by the paths they stand for.
func (p *paths) expand(s string) string {
	for i := len(p.ids); i > 0; i-- { // $ID10 before $ID1
		s = strings.ReplaceAll(s, "$ID"+strconv.Itoa(i), p.ids[i-1])
	}
	s = strings.ReplaceAll(s, "$WORKDIR", p.workdir)
	s = strings.ReplaceAll(s, "$OUTSIDE", p.outside)
	if p.spill != "" {
		s = strings.ReplaceAll(s, "$SPILL", p.spill)
	}
	return s
}

// spillDir matches a session's directory for saved output (see session.SpillDir).
var spillDir = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/boris-[A-Za-z0-9]*-[A-Z2-7]{10}`)

// spillID matches the random part of a saved output file's name.
var spillID = regexp.MustCompile(`\$SPILL/[A-Za-z]*-([0-9a-f]{6,})`)

// substitute replaces the paths in s by their variables, learning the spill directory
// from the first result that names it.
func (p *paths) substitute(s string) string {
	if p.spill == "" {
		p.spill = spillDir.FindString(s)
	}
	if p.spill != "" {
		s = strings.ReplaceAll(s, p.spill, "$SPILL")
		s = spillID.ReplaceAllStringFunc(s, func(m string) string {
			sub := spillID.FindStringSubmatch(m)
			i := slices.Index(p.ids, sub[1])
			if i < 0 {
				p.ids = append(p.ids, sub[1])
				i = len(p.ids) - 1
			}
			return strings.TrimSuffix(m, sub[1]) + "$ID" + strconv.Itoa(i+1)
		})
	}
	s = strings.ReplaceAll(s, p.workdir, "$WORKDIR")
	s = strings.ReplaceAll(s, p.outside, "$OUTSIDE")
	return strings.ReplaceAll(s, os.TempDir(), "$TMPDIR")
}

func runCallScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script, err := parseCallScript(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	dir, err := parseDirectives(script.comment)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	needLandlock(t, dir.landlock)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &paths{workdir: filepath.Join(root, "work"), outside: filepath.Join(root, "outside")}
	writeWorkspace(t, p, script.files, dir.run)
	cs := connectScript(t, p, dir)

	var got []scriptCall
	for i, c := range script.calls {
		var args map[string]any
		if err := json.Unmarshal([]byte(p.expand(string(c.args))), &args); err != nil {
			t.Fatalf("%s: call %d: arguments are not a JSON object: %v", file, i+1, err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: args})
		c.want = resultSections(t, i+1, res, err, p, dir.scrubs)
		got = append(got, c)
	}
	out := formatCallScript(script.comment, script.files, got)
	if *update {
		if !bytes.Equal(out, data) {
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if diff := cmp.Diff(strings.Split(string(data), "\n"), strings.Split(string(out), "\n")); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run go test ./internal/tools -update and review:\n%s", file, diff)
	}
}

// writeWorkspace writes the archive's files, each one second newer than the one before,
// then runs the script's setup commands in the work directory.
func writeWorkspace(t *testing.T, p *paths, files []txtar.File, run []string) {
	t.Helper()
	for _, d := range []string{p.workdir, p.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A script may make a directory read-only; the temporary directory must still go.
	t.Cleanup(func() {
		for _, d := range []string{p.workdir, p.outside} {
			_ = filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					_ = os.Chmod(path, 0o755)
				}
				return nil
			})
		}
	})
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		name := p.expand(f.Name)
		if !filepath.IsAbs(name) {
			name = filepath.Join(p.workdir, name)
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(name, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range run {
		cmd := exec.CommandContext(t.Context(), "/bin/bash", "-c", r)
		cmd.Dir = p.workdir
		cmd.Env = append(os.Environ(), "WORKDIR="+p.workdir, "OUTSIDE="+p.outside)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run: %s: %v\n%s", r, err, out)
		}
	}
	// Directories all get one time, older than every file, so that listings of them in
	// time order do not depend on when the test ran.
	for _, d := range []string{p.workdir, p.outside} {
		err := filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return err
			}
			old := base.Add(-time.Hour)
			return os.Chtimes(path, old, old)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// connectScript starts a server configured by the script's flags, as the command line
// would, and connects a client to it.
func connectScript(t *testing.T, p *paths, d directives) *mcp.ClientSession {
	t.Helper()
	args := []string{"--transport=stdio", "--workdir=" + p.workdir}
	for _, f := range d.flags {
		args = append(args, p.expand(f))
	}
	cfg, err := config.Parse(args, func(string) string { return "" }, "test", io.Discard)
	if err != nil {
		t.Fatalf("flags %q: %v", d.flags, err)
	}
	cfg.LogLevel = slog.LevelWarn
	if !slices.ContainsFunc(d.flags, func(f string) bool { return strings.HasPrefix(f, "--state-dir") }) {
		cfg.StateDir = "" // checkpoints only where the script asks for them
	}
	if d.shell != "" {
		cfg.Shell = d.shell
	}
	cs, _ := connect(t, cfg, nil)
	return cs
}

// resultSections renders what call n returned as the sections a script holds for it.
func resultSections(t *testing.T, n int, res *mcp.CallToolResult, err error, p *paths, scrubs []scrub) []txtar.File {
	t.Helper()
	clean := func(s string) string {
		s = p.substitute(s)
		for _, sc := range scrubs {
			s = sc.apply(s)
		}
		return s
	}
	// Result text normally ends with a newline and error text does not; a section says
	// when its text is the exception.
	section := func(name, text string) txtar.File {
		switch {
		case strings.HasPrefix(name, "result") || strings.HasPrefix(name, "structured"):
			if text != "" && !strings.HasSuffix(text, "\n") {
				name += " (no newline at end)"
				text += "\n"
			}
		case strings.HasSuffix(text, "\n"):
			name += " (newline at end)"
		default:
			text += "\n"
		}
		if txtar.NeedsQuote([]byte(text)) {
			t.Fatalf("%s: the text has a line that looks like a txtar file marker:\n%s", name, text)
		}
		return txtar.File{Name: name, Data: []byte(text)}
	}
	if err != nil {
		return []txtar.File{section(fmt.Sprintf("protocol error %d", n), clean(err.Error()))}
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]\n", c.MIMEType, len(c.Data)))
		default:
			parts = append(parts, fmt.Sprintf("[%T]\n", c))
		}
	}
	name := fmt.Sprintf("result %d", n)
	if res.IsError {
		name = fmt.Sprintf("error %d", n)
		// The code starts the text; the result carries no _meta.
		if code, _, ok := strings.Cut(strings.Join(parts, ""), ": "); ok && strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
			name += ": " + code
		}
		if _, ok := res.Meta["code"]; ok {
			t.Errorf("call %d: error result with _meta %v: want no code in it", n, res.Meta)
		}
	}
	out := []txtar.File{section(name, clean(strings.Join(parts, "\n")))}
	if res.StructuredContent != nil {
		out = append(out, section(fmt.Sprintf("structured %d", n), clean(structuredText(t, res.StructuredContent))))
	}
	return out
}

// structuredText is v as indented JSON, without the running time, which no two runs
// share (and which is left out when it rounds to 0 ms).
func structuredText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	var hide func(any)
	hide = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k == "duration_ms" {
					delete(v, k)
					continue
				}
				hide(e)
			}
		case []any:
			for _, e := range v {
				hide(e)
			}
		}
	}
	hide(generic)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(generic); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func formatCallScript(comment []byte, files []txtar.File, calls []scriptCall) []byte {
	a := &txtar.Archive{Comment: comment, Files: slices.Clone(files)}
	for i, c := range calls {
		a.Files = append(a.Files, txtar.File{Name: fmt.Sprintf("call %d: %s", i+1, c.tool), Data: c.args})
		a.Files = append(a.Files, c.want...)
	}
	return txtar.Format(a)
}

// TestCallScriptsCoverEveryErrorCode: every error code a tool can return appears in at
// least one testdata/calls script, so its wording is pinned.
func TestCallScriptsCoverEveryErrorCode(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("errors.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := regexp.MustCompile(`Code = "([A-Z_]+)"`).FindAllSubmatch(src, -1)
	if len(codes) == 0 {
		t.Fatal("no error codes found in errors.go")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "calls", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range a.Files {
			if m := resultName.FindStringSubmatch(s.Name); m != nil && m[1] == "error" && m[3] != "" {
				seen[strings.TrimPrefix(m[3], ": ")] = true
			}
		}
	}
	for _, c := range codes {
		if !seen[string(c[1])] {
			t.Errorf("no testdata/calls script shows an error with code %s", c[1])
		}
	}
}
