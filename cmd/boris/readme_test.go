package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

// The recipes of the README and of every page in docs/ are what a user copies, so they are
// run as written where they live: every ```sh block, page by page (the README first), section
// by section (each "## " heading; what comes before the first is a section named by the
// page's title), in a copy of the sources, with the section's blocks as one bash script. The
// binary the Quick start builds (./boris) is built in the copy first, for every page's
// recipes. A comment line right above a block can say
//
//	<!-- readme-test: skip WHY -->       the block is not run, for the reason given
//	<!-- readme-test: expect REGEXP -->  the section's output must match REGEXP
//
// A block that starts Boris in the background (a line "boris … &") is followed by a
// wait for its "serving http" log line. The scripts run with HOME in a temporary
// directory, "/path/to/project" standing for a temporary project, port 8080 moved to a
// free one, Go's caches where they were, and GOFLAGS=-trimpath, so that building in a new
// directory each time reuses the build cache. A section that uses a program this machine lacks is skipped: claude (fails
// with BORIS_E2E_CLAUDE=1), docker or podman without a daemon, or codex.

// readmeBlock is one ```sh block of a page.
type readmeBlock struct {
	line   int // where the block starts
	text   string
	skip   string   // why the block is not run; "" to run it
	expect []string // what the section's output must match
}

// readmeSection is the blocks under one "## " heading of a page.
type readmeSection struct {
	page   string // README.md or docs/NAME.md
	title  string
	blocks []readmeBlock
}

// docPages returns the pages whose recipes are run and whose links are checked, relative
// to the repository's root: README.md first, then docs/*.md in order.
func docPages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{"README.md"}
	for _, d := range docs {
		pages = append(pages, filepath.ToSlash(strings.TrimPrefix(d, "../../")))
	}
	return pages
}

// readPage returns the text of a page named as docPages names it.
func readPage(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", page))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Boris from a copy of the sources and runs the recipes of the README and docs/; skipped with -short")
	}
	work := copySources(t)
	build := exec.Command("go", "build", "-o", "boris", "./cmd/boris") // as the Quick start does
	build.Dir = work
	build.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building Boris as the Quick start does: %v\n%s", err, out)
	}
	for _, page := range docPages(t) {
		var sections []readmeSection
		for _, sec := range parseReadme(page, readPage(t, page)) {
			if sec.runs() {
				sections = append(sections, sec)
			}
		}
		if len(sections) == 0 {
			continue // nothing to run on this page
		}
		t.Run(page, func(t *testing.T) {
			for _, sec := range sections {
				t.Run(sec.title, func(t *testing.T) { runSection(t, sec, work) })
			}
		})
	}
}

// runs reports whether any block of the section is run.
func (s readmeSection) runs() bool {
	for _, b := range s.blocks {
		if b.skip == "" {
			return true
		}
	}
	return false
}

var readmeMarker = regexp.MustCompile(`^<!-- readme-test: (skip|expect) (.*) -->$`)

// parseReadme returns a page's sections with their ```sh blocks.
func parseReadme(page, text string) []readmeSection {
	var secs []readmeSection
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "# ") && len(secs) == 0:
			secs = append(secs, readmeSection{page: page, title: strings.TrimPrefix(line, "# ")})
		case strings.HasPrefix(line, "## "):
			secs = append(secs, readmeSection{page: page, title: strings.TrimPrefix(line, "## ")})
		case line == "```sh":
			if len(secs) == 0 {
				secs = append(secs, readmeSection{page: page, title: page})
			}
			b := readmeBlock{line: i + 1}
			for j := i - 1; j >= 0; j-- {
				m := readmeMarker.FindStringSubmatch(lines[j])
				if m == nil {
					break
				}
				if m[1] == "skip" {
					b.skip = m[2]
				} else {
					b.expect = append(b.expect, m[2])
				}
			}
			var body []string
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				body = append(body, lines[i])
			}
			b.text = strings.Join(body, "\n")
			secs[len(secs)-1].blocks = append(secs[len(secs)-1].blocks, b)
		case strings.HasPrefix(line, "```"): // another fence: no headings inside
			for i++; i < len(lines) && lines[i] != "```"; i++ {
			}
		}
	}
	return secs
}

// copySources copies what building Boris needs (as .dockerignore lists it, and the
// Dockerfile) to a temporary directory, the user's fresh clone.
func copySources(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, p := range []string{"go.mod", "go.sum", "cmd", "internal", "Dockerfile", ".dockerignore"} {
		if out, err := exec.Command("cp", "-R", filepath.Join("../..", p), dst).CombinedOutput(); err != nil {
			t.Fatalf("copying %s: %v\n%s", p, err, out)
		}
	}
	return dst
}

// background matches a line that ends by leaving a command running in the background.
var background = regexp.MustCompile(`(?m)(^|[^&])&\s*(#.*)?$`)

// script makes the section's bash script, and says which program it lacks, if any.
func (s readmeSection) script(port int, project string) (string, []string, string) {
	var b strings.Builder
	var expect []string
	b.WriteString("set -euo pipefail\n")
	for _, blk := range s.blocks {
		if blk.skip != "" {
			continue
		}
		text := strings.NewReplacer("127.0.0.1:8080", "127.0.0.1:"+strconv.Itoa(port),
			"localhost:8080", "localhost:"+strconv.Itoa(port), "/path/to/project", project).Replace(blk.text)
		if missing := missingProgram(text); missing != "" {
			return "", nil, missing
		}
		fmt.Fprintf(&b, "echo '>>> %s:%d' >&2\n%s\n", s.page, blk.line, text)
		if background.MatchString(text) && strings.Contains(text, "boris") {
			b.WriteString("read -r -t 60 _ <&3 || { echo 'readme-test: Boris did not start serving' >&2; exit 1; }\n")
		}
		expect = append(expect, blk.expect...)
	}
	return b.String(), expect, ""
}

// missingProgram names a program the text runs that cannot be used here, or "".
func missingProgram(text string) string {
	uses := func(name string) bool {
		return regexp.MustCompile(`(^|[\s;|&(])` + name + `\s`).MatchString(text)
	}
	for _, name := range []string{"claude", "codex", "curl", "openssl", "docker", "podman"} {
		if !uses(name) {
			continue
		}
		if _, err := exec.LookPath(name); err != nil {
			return name
		}
		if (name == "docker" || name == "podman") && exec.Command(name, "info").Run() != nil {
			return name + " (no daemon)"
		}
	}
	return ""
}

func runSection(t *testing.T, sec readmeSection, work string) {
	home, project, port := t.TempDir(), t.TempDir(), freePort(t)
	if abs, err := filepath.Abs("../../e2e/claudecode/node_modules/.bin"); err == nil {
		t.Setenv("PATH", abs+string(os.PathListSeparator)+os.Getenv("PATH")) // the pinned claude first
	}
	script, expect, missing := sec.script(port, project)
	if missing != "" {
		if strings.HasPrefix(missing, "claude") {
			testutil.Missing(t, "BORIS_E2E_CLAUDE", "the recipe needs the Claude Code CLI: run `npm ci --prefix e2e/claudecode`")
		}
		t.Skipf("the recipe needs %s, which this machine lacks", missing)
	}
	env := append(os.Environ(), "HOME="+home, "BORIS_PORT="+strconv.Itoa(port), "BORIS_TOKEN=",
		// Builds in the copy, whose path is new each time, then share the build cache.
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	out, stderr, err := runScript(t, script, work, append(env, goCaches(t)...))
	if err != nil {
		t.Fatalf("the recipes of %q in %s failed: %v\nstdout:\n%s\nstderr:\n%s", sec.title, sec.page, err, out, stderr)
	}
	for _, re := range expect {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output of %q does not match %q:\n%s\nstderr:\n%s", sec.title, re, out, stderr)
		}
	}
}

// runScript runs script with bash in dir, and stops whatever it left running when it
// ends. On descriptor 3 the script reads a line for each "serving http" that Boris logs.
func runScript(t *testing.T, script, dir string, env []string) (string, string, error) {
	ready, readyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Files, not buffers, so that no copying goroutine waits for what the script left
	// running to close its output.
	stdout, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, stdout, errW
	cmd.ExtraFiles = []*os.File{ready}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready.Close()
	errW.Close()
	var stderr bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer readyW.Close()
		sc := bufio.NewScanner(io.TeeReader(errR, &stderr))
		for sc.Scan() {
			if strings.Contains(sc.Text(), `msg="serving http"`) {
				_, _ = readyW.WriteString("\n")
			}
		}
	}()
	// The script ends when its last command does; then stop what it left in the
	// background (a server), and read its log to the end.
	timer := time.AfterFunc(5*time.Minute, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	state, werr := cmd.Process.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // something ignored SIGTERM
		<-done
	}
	errR.Close()
	if werr == nil && !state.Success() {
		werr = errors.New(state.String())
	}
	out, _ := os.ReadFile(stdout.Name())
	return string(out), stderr.String(), werr
}

// goCaches names Go's module and build caches as this process has them, which the
// temporary HOME would otherwise move (and empty).
func goCaches(t *testing.T) []string {
	out, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOPATH=" + v[0], "GOMODCACHE=" + v[1], "GOCACHE=" + v[2]}
}

// freePort returns a TCP port no one listens on now.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
