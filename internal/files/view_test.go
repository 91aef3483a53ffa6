package files

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, name string, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// numberedText builds the expected view text of lines first..last of lines.
func numberedText(lines []string, first, last int) string {
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return b.String()
}

func manyLines(n, width int) ([]string, string) {
	lines := make([]string, n)
	var b strings.Builder
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d %s", i+1, strings.Repeat("x", width))
		b.WriteString(lines[i])
		b.WriteByte('\n')
	}
	return lines, b.String()
}

// noise is n random bytes without NUL, as head -c n /dev/urandom | tr -d '\0' gives.
func noise(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + r.IntN(255))
	}
	return string(b)
}

// Lines of 8-bit text: Latin-1 (mostly ASCII) and Windows-1251 Cyrillic (mostly high bytes).
const (
	latin1Line = "Le caf\xe9 \xe0 c\xf4t\xe9 de l'\xe9glise ferme \xe0 midi; na\xefve fa\xe7on.\n"
	cp1251Line = "\xcf\xf0\xe8\xe2\xe5\xf2, \xec\xe8\xf0! \xdd\xf2\xee \xf2\xe5\xea\xf1\xf2 \xed\xe0 \xf0\xf3\xf1\xf1\xea\xee\xec.\n"
)

var (
	latin1Prose = strings.Repeat(latin1Line, 40)
	cp1251Prose = strings.Repeat(cp1251Line, 40)
)

func TestView(t *testing.T) {
	t.Parallel()
	small := []string{"alpha", "beta", "gamma", "delta"}
	smallText := strings.Join(small, "\n") + "\n"
	// big is over wholeFileLimit, so it is streamed.
	bigLines, bigText := manyLines(40000, 30)
	long := strings.Repeat("é", 5000)

	tests := []struct {
		name    string
		content string
		opts    ViewOptions
		want    FileView // only the fields compared below
		text    string
		wantErr error
		errHas  string
	}{
		{name: "default", content: smallText, want: FileView{First: 1, Last: 4, Lines: 4}, text: numberedText(small, 1, 4)},
		{name: "range", content: smallText, opts: ViewOptions{Start: 2, End: 3}, want: FileView{First: 2, Last: 3, Lines: -1, More: true}, text: numberedText(small, 2, 3)},
		{name: "to the end", content: smallText, opts: ViewOptions{Start: 3, End: -1}, want: FileView{First: 3, Last: 4, Lines: 4}, text: numberedText(small, 3, 4)},
		{name: "end clamped", content: smallText, opts: ViewOptions{Start: 3, End: 99}, want: FileView{First: 3, Last: 4, Lines: 4, AskedEnd: 99}, text: numberedText(small, 3, 4)},
		{name: "start past end", content: smallText, opts: ViewOptions{Start: 5, End: 9}, wantErr: ErrInvalid, errHas: "which has 4 lines"},
		{name: "start past end of unterminated", content: "a\nb", opts: ViewOptions{Start: 4, End: -1}, wantErr: ErrInvalid, errHas: "which has 2 lines"},
		{name: "last line without newline", content: "a\nb", opts: ViewOptions{Start: 2, End: 2}, want: FileView{First: 2, Last: 2, Lines: 2}, text: "     2\tb\n"},
		{name: "end before start", content: smallText, opts: ViewOptions{Start: 3, End: 2}, wantErr: ErrInvalid},
		{name: "start zero", content: smallText, opts: ViewOptions{Start: -1, End: 2}, wantErr: ErrInvalid},
		{name: "empty", content: "", want: FileView{First: 1, Last: 0, Lines: 0}},
		{name: "crlf", content: "a\r\nb\r\n", want: FileView{First: 1, Last: 2, Lines: 2, CRLF: true}, text: "     1\ta\n     2\tb\n"},
		{name: "cr line endings", content: "a\rb\rc\r", want: FileView{First: 1, Last: 3, Lines: 3, CR: true}, text: "     1\ta\n     2\tb\n     3\tc\n"},
		{name: "cr line endings, range", content: "a\rb\rc", opts: ViewOptions{Start: 2, End: -1}, want: FileView{First: 2, Last: 3, Lines: 3, CR: true}, text: "     2\tb\n     3\tc\n"},
		{name: "stray cr on an unterminated last line is not crlf", content: "x\ny\r", want: FileView{First: 1, Last: 2, Lines: 2}, text: "     1\tx\n     2\ty\r\n"},
		{name: "big cr", content: strings.ReplaceAll(bigText, "\n", "\r"), opts: ViewOptions{Start: 39999, End: -1}, want: FileView{First: 39999, Last: 40000, Lines: 40000, CR: true}, text: numberedText(bigLines, 39999, 40000)},
		{name: "bom", content: "\xEF\xBB\xBFa\nb\n", want: FileView{First: 1, Last: 2, Lines: 2}, text: "     1\ta\n     2\tb\n"},
		{name: "latin-1", content: "caf\xe9\n", want: FileView{First: 1, Last: 1, Lines: 1, NotUTF8: true}, text: "     1\tcaf\xe9\n"},
		{name: "long line", content: long + "\nshort\n", want: FileView{First: 1, Last: 2, Lines: 2, Cut: 1},
			text: "     1\t" + strings.Repeat("é", 2000) + " … [line cut: 2,000 of 5,000 characters shown]\n     2\tshort\n"},
		{name: "text that starts like a GIF", content: "GIF89a is a format\n", want: FileView{First: 1, Last: 1, Lines: 1}, text: "     1\tGIF89a is a format\n"},
		{name: "text that starts like a BMP", content: "BM is not an image here\n", want: FileView{First: 1, Last: 1, Lines: 1}, text: "     1\tBM is not an image here\n"},
		{name: "svg is text", content: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n", want: FileView{First: 1, Last: 1, Lines: 1}, text: "     1\t<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n"},
		{name: "binary", content: "ab\x00cd", wantErr: ErrUnsupported, errHas: "binary file (5 bytes"},
		{name: "random bytes without NUL", content: noise(20000), wantErr: ErrUnsupported, errHas: "binary file (20,000 bytes, detected type application/octet-stream"},
		{name: "big random bytes without NUL", content: noise(2 << 20), opts: ViewOptions{Start: 1, End: 2}, wantErr: ErrUnsupported, errHas: "binary file"},
		{name: "latin-1 prose", content: latin1Prose, want: FileView{First: 1, Last: 40, Lines: 40, NotUTF8: true}, text: numberedText(strings.Split(strings.Repeat(latin1Line, 40), "\n"), 1, 40)},
		{name: "cp1251 prose (mostly high bytes)", content: cp1251Prose, want: FileView{First: 1, Last: 40, Lines: 40, NotUTF8: true}, text: numberedText(strings.Split(strings.Repeat(cp1251Line, 40), "\n"), 1, 40)},
		{name: "text with escapes and form feeds", content: "\x1b[1mbold\x1b[0m\n\f\n\bx\n", want: FileView{First: 1, Last: 3, Lines: 3}, text: "     1\t\x1b[1mbold\x1b[0m\n     2\t\f\n     3\t\bx\n"},
		{name: "big default", content: bigText, want: FileView{First: 1, Last: 2000, Lines: -1, More: true}, text: numberedText(bigLines, 1, 2000)},
		{name: "big middle", content: bigText, opts: ViewOptions{Start: 20000, End: 20005}, want: FileView{First: 20000, Last: 20005, Lines: -1, More: true}, text: numberedText(bigLines, 20000, 20005)},
		{name: "big tail", content: bigText, opts: ViewOptions{Start: 39999, End: 50000}, want: FileView{First: 39999, Last: 40000, Lines: 40000, AskedEnd: 50000}, text: numberedText(bigLines, 39999, 40000)},
		{name: "big past end", content: bigText, opts: ViewOptions{Start: 40001, End: 40002}, wantErr: ErrInvalid, errHas: "which has 40000 lines"},
		{name: "too large without range", content: bigText, opts: ViewOptions{MaxFileSize: 1000}, wantErr: ErrTooLarge, errHas: "over the 1,000-byte limit"},
		{name: "too large with range", content: bigText, opts: ViewOptions{Start: 3, End: 3, MaxFileSize: 1000}, want: FileView{First: 3, Last: 3, Lines: -1, More: true}, text: numberedText(bigLines, 3, 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, "f.txt", tt.content)
			if tt.opts.MaxFileSize == 0 {
				tt.opts.MaxFileSize = 10 << 20
			}
			v, err := View(t.Context(), p, tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(fmt.Sprint(err), tt.errHas) {
					t.Fatalf("View(%+v) error = %v, want %v containing %q", tt.opts, err, tt.wantErr, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("View(%+v): %v", tt.opts, err)
			}
			got := FileView{First: v.First, Last: v.Last, Lines: v.Lines, AskedEnd: v.AskedEnd, More: v.More, Cut: v.Cut, CRLF: v.CRLF, CR: v.CR, NotUTF8: v.NotUTF8}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("View(%+v) (-want +got):\n%s", tt.opts, diff)
			}
			if v.Text != tt.text {
				t.Errorf("View(%+v).Text = %q, want %q", tt.opts, trim(v.Text), trim(tt.text))
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:150] + "…" + s[len(s)-150:]
	}
	return s
}

func TestViewDigest(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "f.txt", "hello\n")
	v, err := View(t.Context(), p, ViewOptions{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if v.Digest != ContentDigest([]byte("hello\n")) || string(v.Content) != "hello\n" {
		t.Errorf("small file: Digest/Content not of the whole content")
	}
	_, big := manyLines(40000, 30)
	p = writeFile(t, "big.txt", big)
	v, err = View(t.Context(), p, ViewOptions{Start: 5, End: 6, MaxFileSize: 100 << 20})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(p)
	if v.Digest != StatDigest(info) || v.Content != nil {
		t.Errorf("big file: Digest is not the stat digest, or Content was kept")
	}
}

func TestViewLongLineStreamed(t *testing.T) {
	t.Parallel()
	// One 3 MB line, then a short one: streamed, and cut without holding the line.
	p := writeFile(t, "f.txt", strings.Repeat("a", 3<<20)+"\nend\n")
	v, err := View(t.Context(), p, ViewOptions{MaxFileSize: 10 << 20})
	if err != nil {
		t.Fatal(err)
	}
	want := "     1\t" + strings.Repeat("a", 2000) + " … [line cut: 2,000 of 3,145,728 characters shown]\n     2\tend\n"
	if v.Text != want || v.Cut != 1 || v.Lines != 2 {
		t.Errorf("View = %q (cut %d, lines %d), want %q", trim(v.Text), v.Cut, v.Lines, trim(want))
	}
}

func TestViewImages(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, content, mime string }{
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
		{"jpeg", "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00", "image/jpeg"},
		{"gif", "GIF89a\x01\x00\x01\x00\x80\x00\x00", "image/gif"},
		{"webp", "RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00", "image/webp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, "noext", tt.content)
			v, err := View(t.Context(), p, ViewOptions{MaxFileSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if v.MIME != tt.mime || string(v.Image) != tt.content {
				t.Errorf("View(%s) = MIME %q, %d bytes; want %q, %d bytes", tt.name, v.MIME, len(v.Image), tt.mime, len(tt.content))
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		p := writeFile(t, "a.png", "\x89PNG\r\n\x1a\n"+strings.Repeat("\x00", 100))
		if _, err := View(t.Context(), p, ViewOptions{Start: 1, End: 1, MaxFileSize: 50}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("View(large image) error = %v, want ErrTooLarge", err)
		}
	})
}

func TestViewRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct{ name, path, has string }{
		{"fifo", fifo, "named pipe"},
		{"socket", sock, "socket"},
		{"device", "/dev/null", "character device"},
		{"directory", dir, "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := View(t.Context(), tt.path, ViewOptions{MaxFileSize: 1 << 20})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tt.has) {
					t.Errorf("View(%s) error = %v, want ErrUnsupported naming %q", tt.name, err, tt.has)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("View(%s) hung", tt.name)
			}
			if _, err := Replace(t.Context(), tt.path, "a", "b", false, EditOptions{MaxFileSize: 1 << 20}); !errors.Is(err, ErrUnsupported) {
				t.Errorf("Replace(%s) error = %v, want ErrUnsupported", tt.name, err)
			}
		})
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"b/deep/deeper", ".git/objects", "node_modules/x", ".github", "secret"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a.txt", ".env", "b/z.go", "b/deep/hidden.go", "secret/key"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	hidden := func(p string) bool { return strings.HasSuffix(p, "/secret") }
	l, err := List(t.Context(), nil, dir, 100, hidden)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".env", ".github/", "a.txt", "b/", "b/deep/", "b/z.go", "link -> /etc"}
	if diff := cmp.Diff(want, l.Entries); diff != "" || l.Omitted != 0 {
		t.Errorf("List (-want +got):\n%s(omitted %d)", diff, l.Omitted)
	}
	l, err = List(t.Context(), nil, dir, 3, hidden)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 3 || l.Omitted != 4 {
		t.Errorf("List capped at 3 = %q, %d omitted; want 3 entries, 4 omitted", l.Entries, l.Omitted)
	}
}

// FuzzCRReader: streaming a file through crReader in pieces of any size gives what asLF gives
// for the whole file, when its line endings are lone CRs.
func FuzzCRReader(f *testing.F) {
	f.Add([]byte("a\rb\rc\r"), 1)
	f.Add([]byte("a\r\rb\r\nc\r"), 2)
	f.Add([]byte("\r"), 1)
	f.Add([]byte("x\r\r\r\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, piece int) {
		if !crStyle(data) {
			return
		}
		piece = 1 + abs(piece)%7
		r := &crReader{r: iotest.HalfReader(bytes.NewReader(data))}
		var got []byte
		buf := make([]byte, piece)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if want := asLF(data); !bytes.Equal(got, want) {
			t.Errorf("crReader(%q) in pieces of %d = %q, want %q", data, piece, got, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestViewSpecialFileThatWaits: a pseudo-file whose reads wait for data (the kernel log)
// is refused after a short wait instead of hanging the call.
func TestViewSpecialFileThatWaits(t *testing.T) {
	t.Parallel()
	f, err := os.Open("/proc/kmsg")
	if err != nil {
		t.Skip("/proc/kmsg cannot be opened here")
	}
	f.Close()
	for _, opts := range []ViewOptions{{MaxFileSize: 1 << 20}, {Start: 1, End: 5, MaxFileSize: 1 << 20}} {
		done := make(chan error, 1)
		go func() {
			_, err := View(t.Context(), "/proc/kmsg", opts)
			done <- err
		}()
		select {
		case err := <-done:
			// Unread kernel messages, if any, are read; otherwise the wait is refused.
			if err != nil && (!errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "waits for data")) {
				t.Errorf("View(/proc/kmsg, %+v) = %v, want content or an unsupported-file error", opts, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("View(/proc/kmsg, %+v) hung", opts)
		}
	}
}
