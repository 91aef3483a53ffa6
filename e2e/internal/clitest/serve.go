package clitest

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ServeHTTP starts Boris over HTTP in dir, on a free loopback port, with a bearer token
// read from a file and flags added, and returns its MCP URL and the token. Boris is
// interrupted when the test ends, and its log shown if the test failed.
func ServeHTTP(t *testing.T, dir string, flags ...string) (url, token string) {
	t.Helper()
	token = rand.Text()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--port", "0", "--workdir", dir, "--token-file", tokenFile, "--log-format", "json"}, flags...)
	cmd := exec.Command(Boris(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read the log for the address Boris listens on, and keep it.
	var mu sync.Mutex
	var logs []string
	listening := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			mu.Lock()
			logs = append(logs, lines.Text())
			mu.Unlock()
			var rec struct {
				Msg string `json:"msg"`
				URL string `json:"url"`
			}
			if json.Unmarshal(lines.Bytes(), &rec) == nil && rec.Msg == "serving http" {
				select {
				case listening <- rec.URL:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	log := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(logs, "\n")
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("boris log:\n%s", log())
		}
	})
	select {
	case url = <-listening:
	case <-exited:
		t.Fatalf("boris exited before serving:\n%s", log())
	case <-time.After(30 * time.Second):
		t.Fatal("boris did not start serving within 30 s")
	}
	return url, token
}
