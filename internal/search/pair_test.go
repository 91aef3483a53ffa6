package search

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPairScanAgreesWithNaive compares pairScan with a plain search, case-exact and
// folded, for random literals in random buffers of a few letters: matches across the
// words of the scan, in its tail, at both ends, and near misses where one byte looked for
// is there and the other is not.
func TestPairScanAgreesWithNaive(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbBxX_\n("
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return b
	}
	naive := func(buf, lit []byte, from int, fold bool) int {
		for s := from; s+len(lit) <= len(buf); s++ {
			if fold && bytes.EqualFold(buf[s:s+len(lit)], lit) || !fold && bytes.Equal(buf[s:s+len(lit)], lit) {
				return s
			}
		}
		return -1
	}
	for range 20000 {
		fold := r.IntN(2) == 0
		lit := word(1 + r.IntN(6))
		if fold {
			lit = bytes.ToLower(lit)
		}
		buf := word(r.IntN(80))
		if len(buf) >= len(lit) && r.IntN(2) == 0 {
			copy(buf[r.IntN(len(buf)-len(lit)+1):], lit) // make sure of a match
		}
		p := newPairScan(string(lit), fold)
		for from := 0; from <= len(buf)+1; from++ {
			if got, want := p.index(buf, from), naive(buf, lit, from, fold); got != want {
				t.Fatalf("index(%q, %d) of %q (fold %v, bytes at %d and %d) = %d, want %d", buf, from, lit, fold, p.a1, p.a2, got, want)
			}
		}
	}
}

// TestFinderFindsEveryCase: the finders that look for a literal find it in every case
// when folding, whatever bytes they anchor on, and only in its own case when not.
func TestFinderFindsEveryCase(t *testing.T) {
	t.Parallel()
	text := []byte(strings.Repeat("errno := ErrNo; not exist\n", 5) + "x := os.ERRNOTEXIST\n" + strings.Repeat("return nil\n", 3) + "if errors.Is(err, fs.ErrNotExist) {\n")
	tests := []struct {
		lit  string
		fold bool
		n    int // matches
	}{
		{"errnotexist", true, 2},
		{"ErrNotExist", false, 1},
		{"return", false, 3},
		{"RETURN", false, 0},
		{"return", true, 3},
		{"x", true, 8},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(regexp.QuoteMeta(tt.lit))
		if tt.fold {
			re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(tt.lit))
		}
		var want []int
		for _, loc := range re.FindAllIndex(text, -1) {
			want = append(want, loc[0])
		}
		f := newFinder([]lit{{s: tt.lit, fold: tt.fold}})
		f.reset(text)
		var got []int
		for p := f.next(text, 0); p >= 0; p = f.next(text, p+1) {
			got = append(got, p)
		}
		if !slices.Equal(got, want) || len(got) != tt.n {
			t.Errorf("%q (fold %v) found at %v, want %v (%d)", tt.lit, tt.fold, got, want, tt.n)
		}
	}
}
