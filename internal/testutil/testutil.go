package testutil

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect connects a client (with opts, which may be nil) to s over in-memory transports
// and returns its session. When the test ends, the client's session closes and the
// server's is waited for, before cleanups registered earlier run: register closing what
// serves s before calling Connect.
func Connect(t testing.TB, s *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// OpenFDs returns how many file descriptors this process has open, as /proc/self/fd (or,
// on macOS, /dev/fd) lists them; the test is skipped where neither can be read.
func OpenFDs(t testing.TB) int {
	t.Helper()
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if entries, err := os.ReadDir(dir); err == nil {
			return len(entries)
		}
	}
	t.Skip("cannot list open file descriptors: no /proc/self/fd or /dev/fd")
	return 0
}

// CPUPerOp starts measuring the CPU time, this process's and its children's, that b
// uses; the function it returns reports it per operation (cpu-µs/op), a figure a busy
// machine moves much less than wall time.
func CPUPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuTime() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	d := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return d(self.Utime) + d(self.Stime) + d(children.Utime) + d(children.Stime)
}

// Bearer returns a transport that sends token as a bearer token on every request, through
// next (http.DefaultTransport if nil).
func Bearer(token string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return bearer{token, next}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Missing skips t because a prerequisite is missing, as why says, unless the environment
// variable must is "1": then it fails t. CI sets these variables (see .ci/run), so that a
// machine without Chromium, Landlock or a cgroup of its own fails instead of quietly
// testing less.
func Missing(t testing.TB, must, why string) {
	t.Helper()
	if os.Getenv(must) == "1" {
		t.Fatalf("%s (%s=1 makes this test mandatory)", why, must)
	}
	t.Skipf("%s (set %s=1 to make this a failure)", why, must)
}

// Files writes files (slash-separated name → content) into a new temporary directory,
// making the directories they need, and returns it.
func Files(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
