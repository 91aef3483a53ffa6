package term

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
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

// TestAltKnownWithoutInterpreting: Alt answers from what was written, without waiting
// for the emulator, exactly as the emulator would, however the output is split.
func TestAltKnownWithoutInterpreting(t *testing.T) {
	t.Parallel()
	outputs := []string{
		"plain text\r\n>>> ",
		"\x1b[?2004h>>> \x1b[?2004l",        // bracketed paste, as REPLs print at each prompt
		"\x1b[?1049h\x1b[1;1Hfile\x1b[?25l", // a full-screen program starts
		"\x1b[?1049l\x1b[?25h$ ",            // and ends
		"\x1b[?47h", "\x1b[?1047h\x1b[?1047l", "\x1b[?1;1049h", "\x1b[?1049h\x1bc",
		"\x1b]0;title\x07\x1b[?1049h", "\x1b[31mred\x1b[0m",
	}
	for i, out := range outputs {
		for cut := 0; cut <= len(out); cut++ {
			s := NewScreen(5, 20)
			s.Write([]byte("\x1b[?1049h")) // start on either screen: both are checked
			if cut%2 == 0 {
				s.Write([]byte("\x1b[?1049l"))
			}
			s.flush()
			s.mu.Lock() // the emulator interprets nothing meanwhile
			s.Write([]byte(out[:cut]))
			s.Write([]byte(out[cut:]))
			s.pmu.Lock()
			known, fast := s.switches == 0, s.onAlt
			s.pmu.Unlock()
			s.mu.Unlock()
			if want := s.Snapshot().Alt; known && fast != want {
				t.Errorf("%q cut at %d: Alt() says %v before the output is interpreted, the emulator %v after", out, cut, fast, want)
			}
			if i < 2 && (cut == 0 || cut == len(out)) && !known {
				t.Errorf("%q: Alt() waits for the emulator, though the output switches no screen", out)
			}
			s.Close()
		}
	}
	for _, tt := range []struct {
		p               string
		may, asks, open bool
	}{
		{"\x1b[?2004h>>> ", false, false, false}, {"\x1b[?1049h", true, false, false}, {"ab\x1b", false, false, true},
		{"\x1b[?10", false, false, true}, {"\x1bc", true, false, false}, {"\x1b[?1;47l", true, false, false},
		{"\x1b[1049h", false, false, false}, {"\x1b[31mred\x1b[0m\x1b[2J\x1b[H", false, false, false},
		{"\x1b[6n", false, true, false}, {"\x1b[c", false, true, false}, {"\x1b[>0q", false, true, false},
		{"\x1b[?2026$p", false, true, false}, {"\x1b]11;?\x07", false, true, false}, {"\x1b[?u", false, true, false},
		{"\x1b]0;user@host: ~\x07$ ", false, false, false}, {"\x1b]0;user@ho", false, false, true},
		{"\x1b]10;?\x1b\\", false, true, false},
	} {
		if e := scan([]byte(tt.p)); e.switches != tt.may || e.asks != tt.asks || (e.open >= 0) != tt.open {
			t.Errorf("scan(%q) = %+v; want switches %v, asks %v, open %v", tt.p, e, tt.may, tt.asks, tt.open)
		}
	}
}

// TestQueriesAnswered: a program's query is answered without anyone looking at the
// screen, whether it comes whole or split, after lazily interpreted output.
func TestQueriesAnswered(t *testing.T) {
	t.Parallel()
	for _, parts := range [][]string{{"\x1b[6n"}, {"text\r\n", "\x1b[6n"}, {"ab\x1b[", "6n"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		s := NewScreen(5, 20)
		s.Attach(w)
		for _, p := range parts {
			s.Write([]byte(p))
		}
		b := make([]byte, 64)
		n, err := r.Read(b) // the answer comes by itself: no Snapshot, no Alt
		if err != nil || !strings.HasSuffix(string(b[:n]), "R") {
			t.Errorf("%q: answer %q, %v; want a cursor position report", parts, b[:n], err)
		}
		s.Close()
		r.Close()
		w.Close()
	}
}

// TestEmulatorMadeWhenNeeded: a program that never switches screens or asks anything (a
// window title asks nothing) costs no emulator until its screen is looked at, even after much output; the screen
// then shows its last lines, before and after the screen is closed.
func TestEmulatorMadeWhenNeeded(t *testing.T) {
	t.Parallel()
	for _, closeFirst := range []bool{false, true} {
		s := NewScreen(3, 20)
		for i := range 20000 {
			s.Write([]byte("\x1b[32mline\x1b[0m " + strconv.Itoa(i) + "\r\n"))
		}
		s.Write([]byte("\x1b]0;user@host: ~/project\x07>>> ")) // a prompt that sets the title
		if s.Alt() {
			t.Error("Alt() is true with no switch to the alternate screen")
		}
		s.mu.Lock()
		made := s.em != nil
		s.mu.Unlock()
		if made {
			t.Error("an emulator was made before anyone needed the screen")
		}
		if closeFirst {
			s.Close()
		}
		got := s.Snapshot()
		want := []string{"line 19998", "line 19999", ">>>"}
		if diff := cmp.Diff(want, got.Lines); diff != "" || got.Skipped {
			t.Errorf("closed first %v: screen (-want +got):\n%s (skipped %v)", closeFirst, diff, got.Skipped)
		}
		s.Close()
	}
}

// TestQueryFloodUnread: a program that asks its terminal 20,000 times and reads none of
// the answers holds up nothing. The answers that do not fit in its input are dropped, the
// screen can be looked at, text typed at it is refused as blocked rather than waited on
// for ever, and the screen closes at once.
func TestQueryFloodUnread(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe() // read by no one: its buffer fills, as a terminal's input does
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fill(t, w)
	s := NewScreen(5, 20)
	s.Attach(w)
	done := make(chan error, 1)
	go func() {
		for range 20 {
			s.Write([]byte(strings.Repeat("\x1b[6n", 1000)))
		}
		s.Write([]byte("asked"))
		if got := s.Snapshot().Text(); !strings.Contains(got, "asked") {
			t.Errorf("screen %q, want it to show asked", got)
		}
		err := s.Type([]byte("typed"), nil)
		s.Close()
		done <- err
	}()
	select {
	case err := <-done:
		if err != ErrInputBlocked {
			t.Errorf("Type into a full input = %v, want ErrInputBlocked", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the screen did not get through a flood of unread queries within 20s")
	}
}

// fill writes to w until it takes no more.
func fill(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 4096)
	for full := false; !full; {
		_ = rc.Write(func(fd uintptr) bool {
			_, err := unix.Write(int(fd), junk)
			full = err == unix.EAGAIN
			return true
		})
	}
}

// TestNoAnswerAfterClose: once the screen is closed, the program being gone or going,
// the rest of its questions get no answer.
func TestNoAnswerAfterClose(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := NewScreen(5, 20)
	s.Attach(w)
	s.Write([]byte("\x1b[?1049h")) // the emulator is made, and waits for output
	s.Snapshot()
	s.pmu.Lock()
	s.pending = append(s.pending, "\x1b[6n"...) // left to interpret when it closes
	s.needed = true
	s.pmu.Unlock()
	s.Close()
	w.Close()
	if b, _ := io.ReadAll(r); len(b) > 0 {
		t.Errorf("the terminal got %q after the screen closed, want nothing", b)
	}
}

// TestHugeRepeat: a character repeated two billion times (CSI n b) draws at once what it
// would draw in the end, the cursor where it would end, and the screen closes at once.
func TestHugeRepeat(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"2000000000", "99999999999999999999999"} {
		done := make(chan Snapshot, 1)
		go func() {
			s := NewScreen(3, 10)
			s.Write([]byte("x\x1b[" + n + "b"))
			sn := s.Snapshot()
			s.Close()
			done <- sn
		}()
		select {
		case sn := <-done:
			if want := []string{"xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx"}; !strings.HasPrefix(strings.Join(sn.Lines, "\n"), strings.Join(want[:2], "\n")) {
				t.Errorf("n %s: screen %q, want it full of x", n, sn.Lines)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("n %s: the screen did not show a huge repeat within 20s", n)
		}
	}
}

func TestCapRepeats(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"x\x1b[5b", "x\x1b[5b"},
		{"x\x1b[35b", "x\x1b[35b"},
		{"x\x1b[36b", "x\x1b[36b"},
		{"x\x1b[45b", "x\x1b[35b"},
		{"a\x1b[1000bz\x1b[2Jy\x1b[1001b", "a\x1b[30bz\x1b[2Jy\x1b[31b"},
		{"\x1b[12;5H\x1b[1000", "\x1b[12;5H\x1b[1000"},
	} {
		if got := string(capRepeats([]byte(c.in), 3, 10)); got != c.want {
			t.Errorf("capRepeats(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
