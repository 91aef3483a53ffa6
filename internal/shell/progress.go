package shell

import (
	"bytes"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Lines gathers a command's output into whole lines for progress reports, so a caller
// can send what arrived since its last report at whatever pace it chooses. It holds at
// most max bytes: when more arrives between two reports, the oldest lines are dropped and
// the next report says how many.
type Lines struct {
	max int

	mu      sync.Mutex
	buf     []byte
	dropped int64
}

// NewLines returns a Lines holding at most max bytes between reports.
func NewLines(max int) *Lines { return &Lines{max: max} }

// Write adds output.
func (l *Lines) Write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) <= l.max {
		return
	}
	// Drop whole lines from the front until the rest fits, in one move.
	over := len(l.buf) - l.max
	cut := over
	if i := bytes.IndexByte(l.buf[over-1:], '\n'); i >= 0 {
		cut = over + i // just after the newline at over-1+i
	} else {
		// One line longer than max: keep its end, on a character boundary.
		for cut < len(l.buf) && !utf8.RuneStart(l.buf[cut]) {
			cut++
		}
	}
	l.dropped += int64(bytes.Count(l.buf[:cut], []byte{'\n'}))
	l.buf = append(l.buf[:0], l.buf[cut:]...)
}

// Take returns the complete lines gathered since the last Take, and whether there were
// any. A partial line waits for its end, unless it alone fills the buffer.
func (l *Lines) Take() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := bytes.LastIndexByte(l.buf, '\n') + 1
	if end == 0 && len(l.buf) >= l.max {
		end = len(l.buf) - incompleteLen(l.buf)
	}
	if end == 0 && l.dropped == 0 {
		return "", false
	}
	var s string
	if l.dropped > 0 {
		s = "[... " + strconv.FormatInt(l.dropped, 10) + " lines skipped ...]\n"
		l.dropped = 0
	}
	s += string(bytes.ToValidUTF8(l.buf[:end], []byte("\uFFFD")))
	l.buf = append(l.buf[:0], l.buf[end:]...)
	return s, true
}

func incompleteLen(b []byte) int { return len(b) - incompleteTail(b) }
