package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

// Digest identifies a file's content (sha256), or for a file read only in part, its identity
// and modification time (see [StatDigest]).
type Digest = [sha256.Size]byte

// Kinds of failure callers branch on. Errors from this package match one of them with
// [errors.Is]; their text says what happened and what to do next.
var (
	ErrInvalid     = errors.New("invalid argument")
	ErrTooLarge    = errors.New("file too large")
	ErrUnsupported = errors.New("unsupported file")
	ErrNoMatch     = errors.New("no match")
	ErrAmbiguous   = errors.New("ambiguous match")
	ErrNotViewed   = errors.New("file not viewed")
	ErrStale       = errors.New("file changed since viewed")
	ErrLossy       = errors.New("edit would not be lossless")
)

// kindError is an error of one of the kinds above, with its own message.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Limits on what a view shows.
const (
	// DefaultLines is how many lines a view without a range shows.
	DefaultLines = 2000
	// MaxLineChars is where a long line is cut in views and edit snippets.
	MaxLineChars = 2000
	// wholeFileLimit: files up to this size are read whole and digested by content when
	// viewed; larger ones are streamed and stop at the range's end.
	wholeFileLimit = 1 << 20
	// blockSize is how much a streamed view reads at a time.
	blockSize = 256 << 10
	// sniffLen is how much of the start of a file decides whether it is binary (as git does).
	sniffLen = 8000
)

// ContentDigest is the digest of content.
func ContentDigest(content []byte) Digest { return sha256.Sum256(content) }

// StatDigest identifies a file by device, inode, size and modification time.
// It is what a view that read only part of a file records: any write to the file changes it.
func StatDigest(info fs.FileInfo) Digest {
	var b []byte
	b = append(b, "stat:"...)
	b = strconv.AppendInt(b, info.Size(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, info.ModTime().UnixNano(), 10)
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(st.Dev), 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, st.Ino, 10)
	}
	return sha256.Sum256(b)
}

// notRegular explains why a file that is not a regular file cannot be read, or returns nil.
func notRegular(path string, mode fs.FileMode) error {
	var what string
	switch {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		return errorf(ErrUnsupported, "%s is a directory, not a file", path)
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	case mode&fs.ModeSymlink != 0:
		what = "a symbolic link that changed while it was being opened"
	default:
		what = "not a regular file"
	}
	return &SpecialError{Path: path, What: what}
}

// Opener opens a path that was already resolved and allowed, for reading or as a directory
// (flag as for [os.OpenFile]; it never creates), and refuses when what it opened is not that
// path: a component swapped for a symlink after the check must not lead elsewhere (see
// pathscope.Resolver.Open). Every read and write of this package opens through one, and a
// write works inside the directory it opened, so what was checked is what is touched. A nil
// Opener opens paths as they are, for callers that confine nothing.
type Opener func(path string, flag int) (*os.File, error)

func (o Opener) open(path string, flag int) (*os.File, error) {
	if o == nil {
		return os.OpenFile(path, flag|syscall.O_CLOEXEC, 0)
	}
	return o(path, flag)
}

// openRegular opens path for reading after checking that it is a regular file, so a FIFO or
// device is refused rather than blocking. The open itself is non-blocking and goes through
// open, in case the path was swapped between the check and the open.
func openRegular(open Opener, path string) (*os.File, fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := notRegular(path, info.Mode()); err != nil {
		return nil, nil, err
	}
	f, err := open.open(path, os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, nil, err
	}
	info, err = f.Stat()
	if err == nil {
		err = notRegular(path, info.Mode())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	// A file on disk is never waited for. A pseudo-file that waits for data (such as
	// /proc/kmsg) can be polled, and then the deadline bounds the wait; it does not
	// apply to files that cannot be polled.
	_ = f.SetReadDeadline(time.Now().Add(specialFileWait))
	return f, info, nil
}

// specialFileWait bounds how long a read waits on a pseudo-file that has nothing to give.
const specialFileWait = time.Second

// readFailed words an error from reading path.
func readFailed(path string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("reading %s stopped: the request ended (%w)", path, err)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &SpecialError{Path: path, Waits: true}
	}
	return fmt.Errorf("reading %s: %w", path, err)
}

// Read returns the whole regular file at path, opened through open, refusing files over
// limit bytes, FIFOs, devices and directories.
func Read(open Opener, path string, limit int64) ([]byte, error) {
	data, _, err := readRegular(open, path, limit)
	return data, err
}

// readRegular reads the whole regular file at path, refusing files over limit bytes.
func readRegular(open Opener, path string, limit int64) ([]byte, fs.FileInfo, error) {
	f, info, err := openRegular(open, path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if info.Size() > limit {
		return nil, nil, tooLarge(path, info.Size(), limit)
	}
	// Read one byte past the limit, in case the file grew since the stat.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, readFailed(path, err)
	}
	if int64(len(data)) > limit {
		return nil, nil, tooLarge(path, int64(len(data)), limit)
	}
	return data, info, nil
}

func tooLarge(path string, size, limit int64) error {
	return &SizeError{Path: path, Size: size, Limit: limit}
}

// SizeError is the [ErrTooLarge] of a file too large to read: what to read instead is the
// caller's to say, in the names of its tools.
type SizeError struct {
	Path        string
	Size, Limit int64
	Whole       bool // the file is too large to view whole, and a part of it may be viewed
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s is %s bytes, over the %s-byte limit (--max-file-size)", e.Path, thousands(e.Size), thousands(e.Limit))
}

// Is reports that a SizeError is an [ErrTooLarge].
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// imageType returns the MIME type of the image format whose content starts with head:
// PNG, JPEG, GIF or WebP. A text file that merely starts with the same letters as a GIF or
// WebP header is not an image.
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xFF\xD8\xFF")):
		return "image/jpeg"
	case (bytes.HasPrefix(head, []byte("GIF87a")) || bytes.HasPrefix(head, []byte("GIF89a"))) && !isText(head):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" && !isText(head):
		return "image/webp"
	}
	return ""
}

// isText reports whether head looks like text: valid UTF-8 (allowing a sequence cut at the
// end) without control characters other than tab, newline, carriage return and form feed.
func isText(head []byte) bool {
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		i += n
	}
	return true
}

// binaryType reports whether head, the start of a file, is binary and if so what it appears
// to be. As git and file(1) decide: a NUL byte makes it binary; so does a high share of bytes
// that text does not hold, as in compressed or random data: more than 30% of the sniffed
// bytes (line endings aside) are control characters or bytes outside UTF-8, and at least 1%
// are control characters. 8-bit text (Latin-1, Windows-1251 and the like) has bytes outside
// UTF-8 but no control characters, so it stays text.
func binaryType(head []byte) (string, bool) {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	if len(head) == 0 {
		return "", false
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return http.DetectContentType(head), true
	}
	// Line endings do not count, so a file is judged the same with LF or CRLF endings.
	var controls, foreign, eols int
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\r':
				eols++
			case isControl(c):
				controls++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			foreign++
		}
		i += n
	}
	if n := len(head) - eols; 100*controls >= n && 100*(controls+foreign) > 30*n {
		return http.DetectContentType(head), true
	}
	return "", false
}

// isControl reports whether c is an ASCII control character that text does not hold: not
// tab, newline, vertical tab, form feed, carriage return, backspace or escape (terminal
// colours in logs).
func isControl(c byte) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', '\b', 0x1b:
		return false
	}
	return c < 0x20 || c == 0x7f
}

func binaryError(path string, size int64, typ string) error {
	return errorf(ErrUnsupported, "%s is a binary file (%s bytes, detected type %s); the file tools show text and PNG, JPEG, GIF or WebP images only",
		path, thousands(size), typ)
}

// nLines says how many lines: "1 line", "3 lines".
func nLines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return strconv.Itoa(n) + " lines"
}

// moreLines is "1 more line" or "n more lines".
func moreLines(n int) string {
	if n == 1 {
		return "1 more line"
	}
	return strconv.Itoa(n) + " more lines"
}

// LineSpan names lines first to last: "line 3", "lines 3-5".
func LineSpan(first, last int) string {
	if first == last {
		return "line " + strconv.Itoa(first)
	}
	return "lines " + strconv.Itoa(first) + "-" + strconv.Itoa(last)
}

// thousands formats n with commas: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
