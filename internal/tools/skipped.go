package tools

import (
	"fmt"
	"strings"

	"github.com/mjkoo/boris/internal/search"
)

// skippedNote says what a search looked at and what it left out and why, so that the
// model can tell absence from blindness.
func skippedNote(searched int, what string, s search.Skipped, maxSize int64, f *face) string {
	var parts []string
	add := func(n int, text string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, text))
		}
	}
	add(s.Ignored, "ignored by .gitignore/.ignore "+f.include.ignored)
	add(s.Deps, "node_modules "+f.include.deps)
	add(s.Hidden, "hidden "+f.include.hidden)
	add(s.Binary, "binary")
	add(s.TooLarge, fmt.Sprintf("over the %s size limit (--max-file-size)", size(maxSize)))
	add(s.Special, "special: FIFOs, sockets, devices (never opened)")
	add(s.Symlinks, "symlinks not followed (to directories, dangling or out of scope)")
	add(s.Unreadable, "unreadable")
	head := ""
	if searched >= 0 {
		head = fmt.Sprintf("Searched %s. ", plural(searched, what))
	}
	if len(parts) == 0 {
		return "[" + head + "Nothing was skipped.]"
	}
	note := "[" + head + "Not searched: " + strings.Join(parts, ", ") + "."
	if s.Ignored+s.Hidden+s.Deps > 0 {
		note += " Ignored, hidden and node_modules directories count once and were not entered."
	}
	return note + "]"
}
