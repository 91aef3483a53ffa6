package tools

import (
	"fmt"
	"strings"
)

// plural is n and the noun, plural unless n is 1: "1 file", "3 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// size words a byte limit as a size ("10 MB", "1 MiB"), or "no" when there is none.
func size(n int64) string {
	switch {
	case n <= 0:
		return "no"
	case n%1_000_000 == 0:
		return fmt.Sprintf("%d MB", n/1_000_000)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%1000 == 0:
		return fmt.Sprintf("%d KB", n/1000)
	}
	return fmt.Sprintf("%d-byte", n)
}

// count formats n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// byteCount is n bytes, with thousands separators: "1 byte", "4,096 bytes".
func byteCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return count(n) + " bytes"
}

// pluralNoun is [plural] for nouns ending in y, whose plural ends in ies: "1 entry",
// "3 directories".
func pluralNoun(n int, noun string) string {
	if stem, ok := strings.CutSuffix(noun, "y"); ok && n != 1 {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return plural(n, noun)
}
