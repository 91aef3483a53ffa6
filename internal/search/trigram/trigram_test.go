package trigram

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	for _, tc := range []struct{ re, want string }{
		{`hello`, `"ell" "hel" "llo"`},
		{`HeLLo`, `"HeL" "LLo" "eLL"`},
		{`(?i)HeLLo`, `("HEL"|"HEl"|"HeL"|"Hel"|"hEL"|"hEl"|"heL"|"hel") ("ELL"|"ELl"|"ElL"|"Ell"|"eLL"|"eLl"|"elL"|"ell") ("LLO"|"LLo"|"LlO"|"Llo"|"lLO"|"lLo"|"llO"|"llo")`},
		{`(?i)a1_`, `("A1_"|"a1_")`},
		{`[aA]bc`, `("Abc"|"abc")`},
		{`x(?i:[a-c])yz`, `(("xAy"|"xay") ("Ayz"|"ayz"))|(("xBy"|"xby") ("Byz"|"byz"))|(("xCy"|"xcy") ("Cyz"|"cyz"))`},
		{"ab\x01cde", `"cde"`},
		{`\w+`, `+`},
		{`foo|bar`, `("bar")|("foo")`},
		{`ab`, `+`},
		{`abc.*xyz`, `("abc") ("xyz")`},
		{`(?i)kind`, `("IND"|"INd"|"InD"|"Ind"|"iND"|"iNd"|"inD"|"ind")`},
		{`ba[rz]`, `("bar")|("baz")`},
	} {
		re, err := syntax.Parse(tc.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := Plan(re).String(); got != tc.want {
			t.Errorf("Plan(%q) = %s, want %s", tc.re, got, tc.want)
		}
	}
}

// TestCandidatesDifferential checks against a brute-force search that every file holding a
// match of a random pattern is a candidate, and that selective patterns do narrow.
func TestCandidatesDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"a", "b", "c", "A", "B", "C", "k", "K", "\u212a", "s", "S", "\u017f", "\xff", "\n", " ", "é", "É", "\x01", "\x02"}
	var files [][]byte
	for range 300 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alpha[rng.IntN(len(alpha))])
		}
		files = append(files, []byte(b.String()))
	}
	x := New()
	for id, f := range files {
		tris, _ := Of(f, nil, 0)
		x.Add(uint32(id), tris)
	}
	atoms := []string{"a", "b", "c", "k", "s", "A", "B", "K", "é", "É", ".", `\w`, `[ab]`, `[a-c]`, `[aB]`, `[a-cA-C]`, `[kK]`, `\x{fffd}`, `[^a]`, " ", "é", `\x01`, `[\x01-\x03]`, `(?i:ab)`}
	narrowed := 0
	for range 3000 {
		var p strings.Builder
		for range 1 + rng.IntN(6) {
			p.WriteString(atoms[rng.IntN(len(atoms))])
			switch rng.IntN(8) {
			case 0:
				p.WriteString("*")
			case 1:
				p.WriteString("+")
			case 2:
				p.WriteString("?")
			case 3:
				p.WriteString("|")
			case 4:
				p.WriteString("{2}")
			}
		}
		pat := p.String()
		if rng.IntN(2) == 0 {
			pat = "(?i)" + pat
		}
		if rng.IntN(3) == 0 {
			pat = "(?s)" + pat
		}
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			continue
		}
		q := Plan(re)
		cand := x.Candidates(q)
		if cand != nil {
			narrowed++
		}
		rx := regexp.MustCompile(pat)
		for id, f := range files {
			if rx.Match(f) && !cand.Has(uint32(id)) {
				t.Fatalf("%q matches file %d (%q) but plan %s leaves it out", pat, id, f, q)
			}
		}
	}
	if narrowed == 0 {
		t.Fatal("no pattern narrowed the candidates")
	}
}

func TestOfLimit(t *testing.T) {
	if _, ok := Of([]byte("abcdefgh"), nil, 3); ok {
		t.Fatal("6 trigrams fit a limit of 3")
	}
	tris, ok := Of([]byte("ABCabc"), nil, 0)
	if !ok || len(tris) != 4 { // ABC BCa Cab abc: case is kept
		t.Fatalf("Of = %v %v", tris, ok)
	}
}
