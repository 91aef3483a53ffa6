package shell

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		data   string
		budget int
		want   string
	}{
		{name: "fits", data: "héllo\n", budget: 10, want: "héllo\n"},
		{name: "exact", data: "abc", budget: 3, want: "abc"},
		{name: "invalid bytes", data: "a\xffb", budget: 10, want: "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Truncate([]byte(tt.data), tt.budget); got != tt.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.data, tt.budget, got, tt.want)
			}
		})
	}
}

func TestTruncateKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	got := Truncate([]byte(b.String()), 1000)
	if !strings.HasPrefix(got, "line 1\nline 2\n") || !strings.HasSuffix(got, "line 5000\n") {
		t.Errorf("Truncate lost the head or tail: %q", got)
	}
	if !strings.Contains(got, "characters omitted") {
		t.Errorf("no marker: %q", got)
	}
	if n := utf8.RuneCountInString(got); n > 1000 {
		t.Errorf("%d characters, over budget", n)
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), 5)
	f.Add([]byte(strings.Repeat("é漢🙂\n", 500)), 300)
	f.Add([]byte("\xf0\x9f\x99"), 1)
	f.Fuzz(func(t *testing.T, data []byte, budget int) {
		budget = budget%5000 + 1
		if budget < 0 {
			budget = -budget
		}
		got := Truncate(data, budget)
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q: invalid UTF-8", data, budget, got)
		}
		if n := utf8.RuneCountInString(got); n > budget {
			t.Fatalf("Truncate(%q, %d) has %d characters", data, budget, n)
		}
		if utf8.Valid(data) && utf8.RuneCount(data) <= budget && got != string(data) {
			t.Fatalf("Truncate(%q, %d) = %q, want it unchanged", data, budget, got)
		}
	})
}

// FuzzOutputCount checks the streaming character count against utf8.RuneCount for any
// split of the stream into writes.
func FuzzOutputCount(f *testing.F) {
	f.Add([]byte("aé漢🙂\xff\xe2\x82"), uint8(3))
	f.Add([]byte("\xe2\x82\x41\xf0\x9f"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		o := NewOutput("", nil)
		n := int(step%7) + 1
		for i := 0; i < len(data); i += n {
			_, _ = o.Write(data[i:min(i+n, len(data))])
		}
		o.mu.Lock()
		end := o.end(true)
		o.mu.Unlock()
		if want := int64(utf8.RuneCount(data)); end.Chars != want {
			t.Fatalf("chars of %q written %d at a time = %d, want %d", data, n, end.Chars, want)
		}
		if want := int64(bytes.Count(data, []byte{'\n'})); end.Lines != want {
			t.Fatalf("lines = %d, want %d", end.Lines, want)
		}
	})
}

func TestOutputSpillAndSince(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out")
	o := NewOutput(path, nil)
	var all bytes.Buffer
	for i := 1; i <= 60000; i++ {
		line := fmt.Sprintf("%d ü\n", i)
		all.WriteString(line)
		_, _ = o.Write([]byte(line))
	}
	first := o.Since(Mark{}, 2000, false, nil)
	if !first.Truncated || first.SpillPath != path {
		t.Fatalf("Since = %+v", first)
	}
	if n := utf8.RuneCountInString(first.Text); n > 2000 {
		t.Errorf("%d characters, over budget", n)
	}
	_, _ = o.Write([]byte("after\n"))
	all.WriteString("after\n")
	next := o.Since(first.To, 2000, true, nil)
	if next.Text != "after\n" || next.Truncated {
		t.Errorf("second read = %q", next.Text)
	}
	o.Close()
	saved, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(saved, all.Bytes()) {
		t.Errorf("spill file holds %d bytes, want the %d written (err %v)", len(saved), all.Len(), err)
	}
	// The whole-stream view after Close still reads the middle from the file.
	full := o.Text(3000, nil)
	if !strings.HasPrefix(full.Text, "1 ü\n") || !strings.HasSuffix(full.Text, "after\n") {
		t.Errorf("Text after Close lost head or tail")
	}
}

func TestOutputSmallButLongSpills(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out")
	o := NewOutput(path, nil)
	data := strings.Repeat("x\n", 20000) // 40 kB: held in memory, but over a 30 000 budget
	_, _ = o.Write([]byte(data))
	o.Close()
	ex := o.Text(DefaultBudget, nil)
	if !ex.Truncated || ex.SpillPath != path {
		t.Fatalf("Text = truncated %v, spill %q", ex.Truncated, ex.SpillPath)
	}
	if saved, _ := os.ReadFile(path); string(saved) != data {
		t.Errorf("spill file does not hold the output")
	}
}

func TestParseExports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string
	}{
		{
			name: "bash",
			in: "declare -x A=\"x\\\"y\\$z\\`w\\\\v\"\ndeclare -ax ARR=([0]=\"a\" [1]=\"b)\")\n" +
				"declare -x B=$'line1\\nline2'\ndeclare -x C=$'t\\there\\001c\\177\\x41\\u00e9'\n" +
				"declare -x D=\"ünï\"\ndeclare -x E\ndeclare -x F=\"\"\ndeclare -rx RO=\"1\"\n" +
				"declare -x G=\"multi\nline\"\n",
			want: []string{"A=x\"y$z`w\\v", "B=line1\nline2", "C=t\there\x01c\x7fAé", "D=ünï", "F=", "RO=1", "G=multi\nline"},
		},
		{
			name: "dash",
			in:   "export A='x\"y$z'\"'\"'q'\nexport B='l1\nl2'\nexport E\nexport H=plain\n",
			want: []string{"A=x\"y$z'q", "B=l1\nl2", "H=plain"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseExports(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseExports (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseExportsRealShells round-trips awkward values through each shell's export -p.
func TestParseExportsRealShells(t *testing.T) {
	t.Parallel()
	values := []string{"plain", "", "with space", "q'uote", `d"q`, "$dollar `tick` \\back", "new\nline", "tab\tctl\x01\x7f", "ünïcödé 🙂", "\xff\xfe raw"}
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			env := []string{"PATH=" + os.Getenv("PATH")}
			for i, v := range values {
				env = append(env, fmt.Sprintf("V%d=%s", i, v))
			}
			c := command(t, sh, "cd .") // not Stateless, so the shell reports its exports
			c.Env = env
			_, res := run(t, c)
			for i, v := range values {
				if want := fmt.Sprintf("V%d=%s", i, v); !slices.Contains(res.Env, want) {
					t.Errorf("%s: env lacks %q", sh, want)
				}
			}
		})
	}
}

func FuzzParseExports(f *testing.F) {
	f.Add("declare -x A=\"b\"\n")
	f.Add("export A='b'\"'\"'c'\n")
	f.Add("declare -x B=$'\\x4\\u12\\U0001F642\\c['\n")
	f.Add("declare -ax A=([0]=\"(\" [1]=')')\n")
	f.Fuzz(func(t *testing.T, s string) {
		env, _ := parseExports(s)
		for _, kv := range env {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || !isName(k) {
				t.Fatalf("parseExports(%q) returned %q", s, kv)
			}
		}
	})
}

// FuzzExportsRoundTrip formats values the way bash and dash do and parses them back.
func FuzzExportsRoundTrip(f *testing.F) {
	f.Add("x\"y$z`w\\v\nnew")
	f.Add("q'uote")
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsRune(v, 0) {
			return
		}
		dq := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(v)
		sq := strings.ReplaceAll(v, `'`, `'"'"'`)
		for _, in := range []string{"declare -x V=\"" + dq + "\"\n", "export V='" + sq + "'\n"} {
			got, err := parseExports(in)
			if err != nil || len(got) != 1 || got[0] != "V="+v {
				t.Fatalf("parseExports(%q) = %q, %v; want V=%q", in, got, err, v)
			}
		}
	})
}

func TestLines(t *testing.T) {
	t.Parallel()
	l := NewLines(20)
	if _, ok := l.Take(); ok {
		t.Errorf("Take on nothing reported lines")
	}
	l.Write([]byte("one\ntw"))
	if got, _ := l.Take(); got != "one\n" {
		t.Errorf("Take = %q, want the complete line", got)
	}
	l.Write([]byte("o\n"))
	if got, _ := l.Take(); got != "two\n" {
		t.Errorf("Take = %q, want the completed line", got)
	}
	for i := range 10 {
		l.Write(fmt.Appendf(nil, "line %d\n", i))
	}
	got, _ := l.Take()
	if !strings.HasPrefix(got, "[... ") || !strings.HasSuffix(got, "line 9\n") {
		t.Errorf("Take after overflow = %q", got)
	}
}

func TestPruneSpills(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := write("a.stdout", 600)
	mid := write("b.stderr", 600)
	other := write("bash-env", 5000)
	cur := write("c.stdout", 600)
	now := time.Now()
	for i, p := range []string{old, mid, cur} {
		_ = os.Chtimes(p, now, now.Add(time.Duration(i)*time.Second))
	}
	PruneSpills(dir, 1300, cur)
	for p, want := range map[string]bool{old: false, mid: true, cur: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, max, step uint8) {
		l := NewLines(int(max%64) + 1)
		n := int(step%9) + 1
		var got strings.Builder
		for i := 0; i < len(data); i += n {
			l.Write(data[i:min(i+n, len(data))])
			if len(l.buf) > l.max {
				t.Fatalf("holds %d bytes, max %d", len(l.buf), l.max)
			}
			if s, ok := l.Take(); ok {
				got.WriteString(s)
			}
		}
		if !utf8.ValidString(got.String()) {
			t.Fatalf("invalid UTF-8 %q", got.String())
		}
	})
}

func TestFitEnv(t *testing.T) {
	t.Parallel()
	big := "BIG=" + strings.Repeat("x", maxEnvEntry)
	mid := func(k string) string { return k + "=" + strings.Repeat("y", 120<<10) }
	var prev []string
	for _, k := range []string{"OLD1", "OLD2", "OLD3", "OLD4", "OLD5", "OLD6"} {
		prev = append(prev, mid(k))
	}
	env := append(slices.Clone(prev), "A=1", big, mid("NEW1"), "B=2", mid("NEW2"), mid("NEW3"), mid("NEW4"))
	kept, dropped := fitEnv(prev, env)
	total := 0
	for _, kv := range kept {
		total += len(kv) + 1
		if len(kv) > maxEnvEntry {
			t.Errorf("kept an entry of %d bytes", len(kv))
		}
	}
	if total > maxEnvTotal {
		t.Errorf("kept %d bytes in all, over %d", total, maxEnvTotal)
	}
	for _, want := range append([]string{"A=1", "B=2"}, prev...) {
		if !slices.Contains(kept, want) {
			t.Errorf("dropped %.10s…, which was small or already there", want)
		}
	}
	if !slices.Contains(dropped, "BIG") || len(dropped) != 3 {
		t.Errorf("dropped %q, want BIG and two of NEW1-4", dropped)
	}
	if kept, dropped := fitEnv(nil, []string{"A=1"}); len(kept) != 1 || dropped != nil {
		t.Errorf("fitEnv of a small env = %q, %q", kept, dropped)
	}
	// A variable made too large keeps its old value.
	kept, dropped = fitEnv([]string{"A=1", "V=small"}, []string{"A=1", "V=" + strings.Repeat("z", maxEnvEntry)})
	if !slices.Equal(kept, []string{"A=1", "V=small"}) || !slices.Equal(dropped, []string{"V"}) {
		t.Errorf("a grown variable: kept %.40q, dropped %q; want V=small kept", kept, dropped)
	}
}

// TestOutputSpillCapped: past its limit a spill file keeps the head and, once the stream
// ends, the tail with a line saying what was dropped; excerpts say so too.
func TestOutputSpillCapped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.stdout")
	o := NewOutput(path, nil)
	const limit = 512 << 10
	o.SetMaxFile(limit)
	var all bytes.Buffer
	for i := range 200000 {
		line := fmt.Sprintf("line %d\n", i)
		all.WriteString(line)
		_, _ = o.Write([]byte(line))
	}
	ex := o.Text(1000, nil)
	if !strings.Contains(ex.Text, "limit on saved output") || !strings.HasSuffix(ex.Text, "line 199999\n") {
		t.Errorf("excerpt does not say the saved output was cut: %q", ex.Text)
	}
	o.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > limit || !bytes.HasPrefix(b, all.Bytes()[:1000]) || !bytes.HasSuffix(b, all.Bytes()[all.Len()-keepBytes:]) || !bytes.Contains(b, []byte("were not saved")) {
		t.Errorf("spill file of %d bytes (limit %d): want the head, a note, the last %d bytes", len(b), limit, keepBytes)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		budget       int
		a, b         int64
		wantA, wantB int
	}{
		{"both fit", 100, 10, 20, 10, 90},
		{"stdout small", 100, 10, 500, 10, 90},
		{"stderr small", 100, 500, 10, 90, 10},
		{"both large", 100, 500, 500, 50, 50},
		{"odd budget", 101, 500, 500, 50, 51},
		{"both empty", 100, 0, 0, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := Split(tc.budget, tc.a, tc.b)
			if a != tc.wantA || b != tc.wantB {
				t.Errorf("Split(%d, %d, %d) = %d, %d; want %d, %d", tc.budget, tc.a, tc.b, a, b, tc.wantA, tc.wantB)
			}
		})
	}
}

// TestOutputMaxLines: an excerpt of a stream with a line cap shows at most about that many
// lines, head and tail, and names the whole lines it left out; a short stream within the
// cap, or within it however long in characters, comes back whole.
func TestOutputMaxLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lines, cap int
		cut        bool
	}{{5000, 100, true}, {100, 100, false}, {99, 100, false}, {101, 100, true}, {5000, 0, false}} {
		path := filepath.Join(t.TempDir(), "out")
		o := NewOutput(path, nil)
		o.SetMaxLines(c.cap)
		for i := 1; i <= c.lines; i++ {
			_, _ = fmt.Fprintf(o, "%d\n", i)
		}
		o.Close()
		ex := o.Text(DefaultBudget, nil)
		n := strings.Count(ex.Text, "\n")
		switch {
		case ex.Truncated != c.cut:
			t.Errorf("%d lines, cap %d: truncated %v, want %v", c.lines, c.cap, ex.Truncated, c.cut)
		case c.cap > 0 && n > c.cap+2: // the marker's own two line ends
			t.Errorf("%d lines, cap %d: excerpt of %d lines", c.lines, c.cap, n)
		case c.cut && !strings.Contains(ex.Note, "(lines "):
			t.Errorf("%d lines, cap %d: note %q does not name the lines left out", c.lines, c.cap, ex.Note)
		case c.cut && (!strings.HasPrefix(ex.Text, "1\n") || !strings.HasSuffix(ex.Text, fmt.Sprintf("\n%d\n", c.lines))):
			t.Errorf("%d lines, cap %d: excerpt lost its head or tail", c.lines, c.cap)
		}
	}
}
