package tools

import (
	"cmp"
	"strings"
	"unicode/utf8"

	"github.com/mjkoo/boris/internal/config"
)

// budget is how many characters one result may hold (--output-budget). The default keeps
// every result within what the known clients pass to the model whole: Claude Code refuses
// a tool result over 25,000 tokens (about 100,000 characters) and saves it on the client's
// machine instead, where a remote Boris cannot help; Codex keeps about 48,000 characters
// for its current models and cuts the middle out of anything longer (about 12,000 for a
// model it does not know). Past a client's limit, what a model needs to go on (what was
// left out, where the full text is, how to read it) stands at the start of the result and
// again at its end ([bothEnds]), where a cut from the middle cannot reach.
func (h *handlers) budget() int {
	return cmp.Or(h.Config.OutputBudget, config.DefaultOutputBudget)
}

// contentBudget is how much of the budget goes to a command's output (both streams
// together), a file's lines or a search's entries; the rest is room for the labels and
// notes around them.
func (h *handlers) contentBudget() int {
	b := h.budget()
	return b - b/10
}

// bothEnds writes body between two copies of the notes that say what it leaves out, so
// that a client that cuts a long result in the middle keeps at least one of them. With no
// notes it writes body alone.
func bothEnds(b *strings.Builder, notes []string, body func(*strings.Builder)) {
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	body(b)
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
}

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
