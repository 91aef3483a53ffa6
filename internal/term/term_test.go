package term

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	s := NewScreen(5, 20)
	defer s.Close()
	tests := []struct {
		name string
		want string // the bytes the key sends, in normal cursor mode
	}{
		{"ctrl-c", "\x03"}, {"Ctrl+C", "\x03"}, {"C-c", "\x03"}, {"^C", "\x03"}, {"ctrl_d", "\x04"},
		{"enter", "\r"}, {"Return", "\r"}, {"tab", "\t"}, {"esc", "\x1b"}, {"Escape", "\x1b"},
		{"backspace", "\x7f"}, {"up", "\x1b[A"}, {"Down", "\x1b[B"}, {"page-down", "\x1b[6~"},
		{"PgUp", "\x1b[5~"}, {"f5", "\x1b[15~"}, {"alt-b", "\x1bb"}, {"ctrl-[", "\x1b"},
	}
	for _, tt := range tests {
		k, err := ParseKey(tt.name)
		if err != nil {
			t.Errorf("ParseKey(%q): %v", tt.name, err)
			continue
		}
		if got := sent(t, k); got != tt.want {
			t.Errorf("ParseKey(%q) sends %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"", "ctrl-", "ctrl-shift-q", "hyper-x", "f13", "ctrl-1"} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) = nil error, want one naming the known keys", bad)
		}
	}
}

// sent returns what pressing k at a screen sends to its terminal.
func sent(t *testing.T, k Key) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := NewScreen(5, 20)
	s.Attach(w)
	if err := s.Type(nil, []Key{k}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	w.Close()
	b := make([]byte, 64)
	n, _ := r.Read(b)
	return string(b[:n])
}

func TestPlain(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"\x1b[31mred\x1b[0m\r\n", "red\n"},
		{"10%\r50%\r100%\n", "100%\n"},
		{"abc\b\bX\n", "aXc\n"},
		{"\x1b]0;title\x07text", "text"},
		{"bell\x07 and\x00 nul", "bell and nul"},
		{"\x1b[?1049h\x1b[1;1Hdrawn", "drawn"},
		{"tab\there\n", "tab\there\n"},
		{"日本語\r\n", "日本語\n"},
	}
	for _, tt := range tests {
		if got := Plain(tt.in); got != tt.want {
			t.Errorf("Plain(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScreenRenders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out string
		want      Snapshot
	}{
		{"text", "one\r\ntwo", Snapshot{Lines: []string{"one", "two", "", ""}, Row: 1, Col: 3}},
		{"wide and combining", "日本|\r\ne\u0301|", Snapshot{Lines: []string{"日本|", "e\u0301|", "", ""}, Row: 1, Col: 2}},
		{"alternate screen", "main\x1b[?1049h\x1b[2;3Halt", Snapshot{Lines: []string{"", "  alt", "", ""}, Row: 1, Col: 5, Alt: true}},
		{"back from it", "main\x1b[?1049hx\x1b[?1049l", Snapshot{Lines: []string{"main", "", "", ""}, Row: 0, Col: 4}},
		{"colours", "\x1b[1;32mgreen\x1b[0m", Snapshot{Lines: []string{"green", "", "", ""}, Row: 0, Col: 5}},
	}
	for _, tt := range tests {
		s := NewScreen(4, 10)
		s.Write([]byte(tt.out))
		got := s.Snapshot()
		s.Close()
		got.Lines = got.Lines[:4]
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: screen after %q (-want +got):\n%s", tt.name, tt.out, diff)
		}
	}
}

// TestScreenSkipsAFlood: output past the bound is skipped on the screen, which shows the
// newest lines and says that some was skipped, and keeps track of the alternate screen.
func TestScreenSkipsAFlood(t *testing.T) {
	t.Parallel()
	s := NewScreen(3, 20)
	defer s.Close()
	s.Write([]byte("\x1b[?1049h"))
	for i := range 20000 {
		s.Write([]byte(strings.Repeat("x", 15) + string(rune('a'+i%26)) + "\r\n"))
	}
	s.Write([]byte("last"))
	got := s.Snapshot()
	if !got.Skipped || !got.Alt || got.Lines[2] != "last" {
		t.Errorf("after a flood: %+v, want the last line shown, the alternate screen kept, and the skip reported", got)
	}
}
