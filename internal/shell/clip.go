package shell

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// cut describes where clip cut a stretch of output.
type cut struct {
	headBytes, tailBytes       int   // bytes of the stretch shown before and after the marker
	headNewlines, tailNewlines int   // newlines shown on each side; -1 when that cut is inside a line
	omitted                    int64 // characters left out
}

// Truncate returns data within budget characters: all of it if it fits, else its head and
// its tail around a marker saying how many characters were left out. The result is always
// valid UTF-8; a character is never split.
func Truncate(data []byte, budget int) string {
	chars := int64(utf8.RuneCount(data))
	if chars <= int64(budget) {
		return strings.ToValidUTF8(string(data), "\uFFFD")
	}
	text, _ := clip(data, data, chars, budget, 0, func(c cut) string {
		return "\n[... " + itoa(c.omitted) + " characters omitted ...]\n"
	})
	return text
}

// clip shows about two fifths of budget from the start of a stretch of output (head is
// its first bytes) and the rest from its end (tail is its last bytes), around the text
// marker returns for the cut. chars is the stretch's length in characters, more than
// budget. With maxLines positive, head and tail also hold at most about two fifths and
// three fifths of that many lines. Cuts fall on line ends when one is near, so whole
// lines can be fetched later.
func clip(head, tail []byte, chars int64, budget, maxLines int, marker func(cut) string) (string, int64) {
	reserve := utf8.RuneCountInString(marker(cut{omitted: chars})) + 8
	for range 4 {
		avail := max(budget-reserve, 0)
		h := firstChars(head, avail*2/5)
		t := lastChars(tail, avail-avail*2/5)
		if maxLines > 0 {
			h = firstLines(h, max(maxLines*2/5, 1))
			t = lastLines(t, max(maxLines-maxLines*2/5-2, 1))
		}
		c := cut{headBytes: len(h), tailBytes: len(t), headNewlines: -1, tailNewlines: -1}
		if i := bytes.LastIndexByte(h, '\n'); i >= 0 && i >= len(h)/2 {
			h = h[:i+1]
		}
		if len(h) > 0 && h[len(h)-1] == '\n' || len(h) == 0 {
			c.headNewlines = bytes.Count(h, []byte{'\n'})
		}
		if i := bytes.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
			t = t[i+1:]
		}
		if len(t) < len(tail) && tail[len(tail)-len(t)-1] == '\n' {
			c.tailNewlines = bytes.Count(t, []byte{'\n'})
		}
		c.headBytes, c.tailBytes = len(h), len(t)
		c.omitted = max(chars-int64(utf8.RuneCount(h))-int64(utf8.RuneCount(t)), 0)
		text := strings.ToValidUTF8(string(h), "\uFFFD") + marker(c) + strings.ToValidUTF8(string(t), "\uFFFD")
		n := utf8.RuneCountInString(text)
		if n <= budget {
			return text, c.omitted
		}
		reserve += n - budget
	}
	// The marker alone does not fit: show as much of it as the budget allows.
	m := []rune(marker(cut{omitted: chars, headNewlines: -1, tailNewlines: -1}))
	return string(m[:min(len(m), max(budget, 0))]), chars
}

// firstLines returns the first n lines of b, or all of b when it has fewer.
func firstLines(b []byte, n int) []byte {
	i := 0
	for range n {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}

// lastLines returns the last n lines of b (the last one may lack its newline), or all of
// b when it has fewer.
func lastLines(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for range n {
		j := bytes.LastIndexByte(b[:end], '\n')
		if j < 0 {
			return b
		}
		end = j
	}
	return b[end+1:]
}

// firstChars returns the longest prefix of b with at most n characters, never ending
// inside a character. Invalid bytes count as one character each.
func firstChars(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	// An incomplete sequence at the very end of b would be split by a later byte.
	if j := incompleteTail(b[:i]); j < i && i == len(b) {
		i = j
	}
	return b[:i]
}

// lastChars returns the longest suffix of b with at most n characters, never starting
// inside a character.
func lastChars(b []byte, n int) []byte {
	i := len(b)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRune(b[:i])
		i -= size
	}
	// Skip continuation bytes of a character that began before b.
	for k := 0; k < utf8.UTFMax-1 && i < len(b) && !utf8.RuneStart(b[i]); k++ {
		i++
	}
	return b[i:]
}

func itoa(n int64) string {
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
