package clients

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// runCline runs `cline --json` with its OpenAI-compatible provider pointed at the fake
// model's chat/completions.
func runCline(t *testing.T, m *clitest.Model, srv server) {
	t.Helper()
	bin := clineCLI.Path(t)
	home := t.TempDir()
	t.Cleanup(func() { stopLeftovers(t, home) })
	env := []string{"HOME=" + home}
	runCLI(t, home, env, time.Minute, bin, "auth", "-p", "openai", "-k", "dummy", "-m", "boris-e2e-model", "-b", m.URL+"/v1")
	transport := map[string]any{"type": "stdio", "command": srv.Command, "args": srv.Args}
	if !srv.stdio() {
		transport = map[string]any{"type": "streamableHttp", "url": srv.URL, "headers": map[string]string{"Authorization": "Bearer " + srv.Token}}
	}
	// What `cline mcp add` writes.
	writeJSON(t, filepath.Join(home, ".cline", "data", "settings", "cline_mcp_settings.json"), map[string]any{"mcpServers": map[string]any{"boris": map[string]any{"transport": transport}}})
	stdout, stderr := runCLI(t, home, env, 5*time.Minute, bin, "--json", "-P", "openai-compatible", "-m", "boris-e2e-model", "Follow the script.")
	wantFinal(t, stdout, stderr)
}

// stopLeftovers stops what a client left running after it exited (cline leaves its hub
// daemon): the processes whose HOME is the client's home directory.
func stopLeftovers(t *testing.T, home string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00HOME="+home+"\x00")) && !bytes.HasPrefix(env, []byte("HOME="+home+"\x00")) {
			continue
		}
		t.Logf("stopping process %d, left running by the client", pid)
		stop(pid)
	}
}

// stop ends pid, with SIGKILL after 5 s of SIGTERM, and returns once it is gone, so that
// it writes nothing more into the test's directories. It is not the test's child, so its
// end can only be seen by asking (a zombie counts as gone: it writes nothing).
func stop(pid int) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		_ = syscall.Kill(pid, sig)
		for range 500 {
			if gone(pid) {
				return
			}
			time.Sleep(10 * time.Millisecond) // polling the end of a process that is not ours
		}
	}
}

func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command's name in parentheses, which may hold any byte.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 < len(stat) && stat[i+2] == 'Z'
}

func TestCline(t *testing.T) { runQuick(t, clineCLI, runCline, false) }

// cline gives up on a call after 60 s by default.
func TestClineLongCall(t *testing.T) { runLongCall(t, clineCLI, runCline) }
