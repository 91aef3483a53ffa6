package tools

import (
	"strings"
	"unicode/utf8"
)

// viewBudget is the most characters of file text one view (or Read) returns; the rest is
// a call away, and the note at the end says which range continues. It keeps every result
// well under what clients accept: Claude Code refuses a tool result over 25,000 tokens
// (about 100,000 characters) and saves it on the client's machine instead, where a
// remote Boris cannot help. grep and find page at [grepBudget], bash and task_output
// keep [shell.DefaultBudget] characters of each stream.
const viewBudget = 40_000

// cutToBudget keeps the whole lines of text (each ending in a newline) that fit in budget
// characters, at least one. It returns them, how many lines they are, and whether any
// were left out.
func cutToBudget(text string, budget int) (kept string, lines int, cut bool) {
	if len(text) <= budget || utf8.RuneCountInString(text) <= budget {
		return text, strings.Count(text, "\n"), false
	}
	chars, end := 0, 0
	for end < len(text) {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			break
		}
		n := utf8.RuneCountInString(text[end : end+i+1])
		if lines > 0 && chars+n > budget {
			break
		}
		chars += n
		end += i + 1
		lines++
	}
	return text[:end], lines, end < len(text)
}
