package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// pager applies head_limit, offset and the character budget to a result's entries.
type pager struct {
	limit, offset int
	budget        int // the most characters of entries a page shows
	maxLines      int // the most lines of entries a page shows (0: any number)
	lines         int // lines of entries shown
	seen          int // entries offered, including those skipped by offset
	shown         int
	chars         int
	more          bool // entries were left out at the end
	total         int  // entries in all; -1: not known
}

func newPager(limit, offset, budget int) *pager {
	return &pager{limit: limit, offset: offset, budget: budget, total: -1}
}

// keep is how many entries in order the search must return: enough to fill the page and
// one more, to tell whether the page was cut.
func (p *pager) keep() int {
	n := p.limit
	if n == 0 {
		n = p.budget / 2
	}
	return p.offset + n + 1
}

// add writes one entry unless it falls before the offset; it returns false once the page
// is full.
func (p *pager) add(b *strings.Builder, s string) bool {
	p.seen++
	if p.seen <= p.offset {
		return true
	}
	n := utf8.RuneCountInString(s)
	if p.limit > 0 && p.shown >= p.limit || p.shown > 0 && (p.chars+n > p.budget || p.maxLines > 0 && p.lines+strings.Count(s, "\n") > p.maxLines) {
		p.more = true
		return false
	}
	b.WriteString(s)
	p.chars += n
	p.lines += strings.Count(s, "\n")
	p.shown++
	return true
}

// note says which entries were shown and how to get the rest.
func (p *pager) note() string {
	of := ""
	if p.total >= 0 {
		of = fmt.Sprintf(" of %d", p.total)
	}
	switch {
	case p.shown == 0 && p.offset > 0 && p.seen > 0:
		return fmt.Sprintf("[offset %d is past the end: there are %d entries; use a smaller offset.]\n", p.offset, p.seen)
	case p.more:
		why := "the output budget"
		if p.limit > 0 && p.shown >= p.limit {
			why = "head_limit"
		}
		return fmt.Sprintf("[Showing entries %d-%d%s, cut by %s; pass offset: %d to see more.]\n", p.offset+1, p.offset+p.shown, of, why, p.offset+p.shown)
	case p.offset > 0:
		return fmt.Sprintf("[Showing entries %d-%d%s.]\n", p.offset+1, p.offset+p.shown, of)
	}
	return ""
}

// lead puts the note before a page that was cut as well as after it, where a client that
// cuts the middle out of a long result leaves it (see [bothEnds]).
func (p *pager) lead(page string) string {
	if !p.more {
		return page
	}
	return p.note() + page
}
