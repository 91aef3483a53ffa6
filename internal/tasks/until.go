package tasks

import (
	"bytes"
	"context"
	"regexp"
	"time"

	"github.com/mjkoo/boris/internal/shell"
)

// Bounds of [Manager.Until]'s scan: how much it reads at a time, the longest line it
// keeps whole, how many lines before a match it returns, and how long a line it shows.
const (
	scanChunk    = 64 << 10
	maxScanLine  = 64 << 10
	matchContext = 2
	maxShownLine = 1000
)

// Match is the first line of a task's output that matched a pattern.
type Match struct {
	Stream shell.Stream
	Line   int64    // its number in the stream, from 1
	Text   string   // the line, without its newline, cut to maxShownLine bytes
	Before []string // up to matchContext lines before it, cut the same way
}

// Until waits up to wait for a line of task id's output that [Manager.Output] has not
// returned yet to match re, or for the task to end, whichever comes first, and returns the
// first matching line, or nil. It does not move the marks Output reads from, so the
// output it scanned is still the next read's.
func (m *Manager) Until(ctx context.Context, id string, re *regexp.Regexp, wait time.Duration) (*Match, error) {
	t, err := m.get(id)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	scans := [2]*scanner{
		{out: t.proc.Stdout, stream: shell.Stdout, pos: t.outMark.Bytes, line: t.outMark.Lines},
		{out: t.proc.Stderr, stream: shell.Stderr, pos: t.errMark.Bytes, line: t.errMark.Lines},
	}
	t.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var match *Match
	m.watch(ctx, t, timer.C, func(final bool) bool {
		for _, s := range scans {
			if match = s.scan(re, final); match != nil {
				return true
			}
		}
		return false
	})
	return match, nil
}

// scanner reads one stream line by line from a position on.
type scanner struct {
	out     *shell.Output
	stream  shell.Stream
	pos     int64    // bytes read so far
	line    int64    // newlines before pos
	partial []byte   // the line being read, not yet ended
	before  []string // the last lines read, newest last
}

// scan reads what was written since the last scan and returns the first line matching
// re; with final, the stream has ended and a last line without a newline counts too.
func (s *scanner) scan(re *regexp.Regexp, final bool) *Match {
	end := s.out.End().Bytes
	for s.pos < end {
		b, ok := s.out.ReadAt(s.pos, int(min(end-s.pos, scanChunk)))
		if !ok {
			// Neither memory nor a spill file holds it: go on from what comes next.
			s.pos, s.partial = end, nil
			break
		}
		s.pos += int64(len(b))
		for {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				s.partial = append(s.partial, b...)
				break
			}
			s.line++
			if m := s.check(re, append(s.partial, b[:i]...), s.line); m != nil {
				return m
			}
			s.partial, b = s.partial[:0], b[i+1:]
		}
		if len(s.partial) > maxScanLine {
			if m := s.check(re, s.partial, s.line+1); m != nil {
				return m
			}
			s.partial = s.partial[:0]
		}
	}
	if final && len(s.partial) > 0 {
		m := s.check(re, s.partial, s.line+1)
		s.partial = s.partial[:0]
		return m
	}
	return nil
}

// check returns the match of line, line number n, or remembers the line as context for a
// later one.
func (s *scanner) check(re *regexp.Regexp, line []byte, n int64) *Match {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if re.Match(line) {
		return &Match{Stream: s.stream, Line: n, Text: shown(line), Before: append([]string(nil), s.before...)}
	}
	s.before = append(s.before, shown(line))
	if len(s.before) > matchContext {
		s.before = s.before[1:]
	}
	return nil
}

// shown is line as a match shows it: valid UTF-8, at most maxShownLine bytes.
func shown(line []byte) string {
	if len(line) > maxShownLine {
		line = line[:maxShownLine]
	}
	return string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
}
