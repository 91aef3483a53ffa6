package term

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Plain turns what a program wrote to its terminal into plain text, as the lines would
// read on the screen: escape sequences (colours, cursor movement, titles) are parsed out
// by a terminal parser, a carriage return starts its line again (a progress bar shows
// its last state), a backspace takes back the character before it, and other control
// characters but tabs and newlines are dropped.
func Plain(s string) string {
	s = ansi.Strip(s)
	if !strings.ContainsAny(s, "\r\b\x00\x01\x02\x03\x04\x05\x06\x07\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	lines := strings.SplitAfter(s, "\n")
	for _, l := range lines {
		b.WriteString(plainLine(l))
	}
	return b.String()
}

// plainLine is [Plain] for one line, its newline included.
func plainLine(l string) string {
	nl := strings.HasSuffix(l, "\n")
	l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	// What follows the last carriage return overwrites the start of the line.
	var line []rune
	col := 0
	for _, r := range l {
		switch {
		case r == '\r':
			col = 0
		case r == '\b':
			col = max(col-1, 0)
		case r == '\t' || (r >= ' ' && r != 0x7f):
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	out := string(line)
	if nl {
		out += "\n"
	}
	return out
}
