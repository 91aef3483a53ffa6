package term

import (
	"bytes"
	"strconv"
)

// capRepeats rewrites each "repeat the last character n times" (CSI n b) in p whose n is
// over what a screen of rows and cols can show, to the smallest count that leaves the
// same screen and cursor: past a screenful, repeating only scrolls by whole lines. The
// emulator repeats one character at a time, so an n of two billion would keep it busy
// for minutes while a look at the screen, or the end of its task, waits. p is returned
// as it is when it has no such sequence.
func capRepeats(p []byte, rows, cols int) []byte {
	limit := rows * cols
	var out []byte
	done := 0
	for i := bytes.Index(p, []byte("\x1b[")); i >= 0; {
		j := i + 2
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j < len(p) && p[j] == 'b' && j-(i+2) > 0 {
			n, err := strconv.Atoi(string(p[i+2 : j]))
			if err != nil || n > limit {
				if err != nil {
					n = limit + cols // more digits than an int holds
				}
				capped := limit + (n-limit)%cols
				out = append(out, p[done:i+2]...)
				out = strconv.AppendInt(out, int64(capped), 10)
				done = j
			}
		}
		next := bytes.Index(p[j:], []byte("\x1b["))
		if next < 0 {
			break
		}
		i = j + next
	}
	if out == nil {
		return p
	}
	return append(out, p[done:]...)
}
