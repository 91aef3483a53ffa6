package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEscapeStripper: escape sequences go, text and controls stay, however the output is
// split between writes.
func TestEscapeStripper(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text\r\n", "plain text\r\n"},
		{"\x1b[1;32mgreen\x1b[0m and \x1b[38;5;196mred\x1b[m\n", "green and red\n"},
		{"\x1b]0;user@host: ~\x07$ ", "$ "},                        // a title, ended by BEL
		{"\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"}, // hyperlinks, ended by ST
		{"\x1b[?1049h\x1b[H\x1b[2Jscreen\x1b[?25l", "screen"},
		{"\x1b7\x1b8\x1b(B\x1b=keys", "keys"},
		{"\x1bP+q544e\x1b\\after", "after"},
		{"日本\x1b[1m語\x1b[0m e\u0301", "日本語 e\u0301"},
		{"10%\r\x1b[K20%\r\x1b[K", "10%\r20%\r"},
		{"\x1b[1\r\nm", "\r\n"},    // a control inside a sequence acts, and the sequence goes on
		{"\x1b[1\x18x", "x"},       // CAN cancels it
		{"\x1b\x1b[31mred", "red"}, // ESC ESC
	}
	for _, tt := range tests {
		for cut := 0; cut <= len(tt.in); cut++ {
			var s escapeStripper
			got := string(s.strip([]byte(tt.in[:cut])))
			got += string(s.strip([]byte(tt.in[cut:])))
			if got != tt.want {
				t.Errorf("%q cut at %d: %q, want %q", tt.in, cut, got, tt.want)
			}
		}
		var s escapeStripper
		var got strings.Builder
		for i := range len(tt.in) {
			got.Write(s.strip([]byte{tt.in[i]}))
		}
		if got.String() != tt.want {
			t.Errorf("%q a byte at a time: %q, want %q", tt.in, got.String(), tt.want)
		}
	}
}

// TestOutputKeepsText: a terminal's output is kept and spilled as text, while whoever
// watches the stream sees the raw bytes.
func TestOutputKeepsText(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out")
	var seen strings.Builder
	o := NewOutput(path, func(p []byte) { seen.Write(p) })
	o.keepText()
	line := "\x1b[32mok\x1b[0m " + strings.Repeat("x", 100) + "\n"
	n := keepBytes/len("ok "+strings.Repeat("x", 100)+"\n") + 10 // enough to spill
	for range n {
		o.Write([]byte(line))
	}
	o.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "\x1b") || !strings.HasPrefix(string(b), "ok xxx") {
		t.Errorf("spill file keeps escapes or lost text: starts %q", b[:min(len(b), 40)])
	}
	if want := strings.Repeat(line, n); seen.String() != want {
		t.Errorf("the watcher saw %d bytes, want the %d raw bytes written", seen.Len(), len(want))
	}
}
