package files

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRewriteKeepsModeTheUmaskStrips: the temporary file is created through the umask,
// so a rewrite must still give it the bits the umask took away.
func TestRewriteKeepsModeTheUmaskStrips(t *testing.T) {
	t.Parallel()
	if umask(t)&0o066 == 0 {
		t.Skip("the umask strips no group or other bits")
	}
	p := filepath.Join(t.TempDir(), "shared.txt")
	if err := os.WriteFile(p, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	c, err := Create(nil, p, []byte("b\n"), 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o666 || c.Mode.Perm() != 0o666 || c.ModeLost != "" {
		t.Errorf("after a rewrite the mode is %v (Create says %v, lost %q), want 0666", info.Mode(), c.Mode, c.ModeLost)
	}
}

// umask reads the process's umask without changing it.
func umask(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 32)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Skip("no Umask in /proc/self/status")
	return 0
}
