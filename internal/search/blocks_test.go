package search

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestSplitBlocks: blocks cover the file in order, each ends just after a '\n' and is at
// least blockSize bytes but the last, which ends at the end, and each knows its first
// line's number.
func TestSplitBlocks(t *testing.T) {
	tinyBlocks(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		var b bytes.Buffer
		for range rng.IntN(40) {
			b.WriteString(strings.Repeat("x", []int{0, 1, 5, 23, 24, 25, 80}[rng.IntN(7)]))
			if rng.IntN(8) > 0 {
				b.WriteByte('\n')
			}
		}
		data := b.Bytes()
		bt := splitBlocks(data)
		if bt == nil {
			if len(data) > blockSize && bytes.IndexByte(data[blockSize-1:len(data)-1], '\n') >= 0 {
				t.Fatalf("%q: one block, want more", data)
			}
			continue
		}
		for i := range bt.off {
			s, e := bt.bounds(i, int64(len(data)))
			if want := 1 + bytes.Count(data[:s], []byte{'\n'}); int(bt.line[i]) != want {
				t.Fatalf("%q: block %d starts at line %d, want %d", data, i, bt.line[i], want)
			}
			if i+1 < len(bt.off) && (e-s < int64(blockSize) || data[e-1] != '\n' ||
				bytes.IndexByte(data[s+int64(blockSize)-1:e-1], '\n') >= 0) {
				t.Fatalf("%q: block %d is %d..%d", data, i, s, e)
			}
			if i == 0 && s != 0 || i == len(bt.off)-1 && e != int64(len(data)) || e <= s {
				t.Fatalf("%q: block %d is %d..%d", data, i, s, e)
			}
		}
	}
}

// TestIndexReadsCandidateBlocks searches big files of many tiny blocks, whose matches lie
// in the first, middle and last blocks, on lines longer than a block and across the
// nominal end of one, with CRLF and without a last newline, in every mode, through an
// index (walked and live) and by scan: the results are the same, and a search for a rare
// word reads a small part of the files.
func TestIndexReadsCandidateBlocks(t *testing.T) {
	tinyBlocks(t)
	root := t.TempDir()
	var filler strings.Builder
	for i := range 300 {
		filler.WriteString(strings.Repeat("abc def ", i%7) + "line\n")
	}
	long := strings.Repeat("wide ", 200)
	files := map[string]string{
		"first.txt":   "rareIdent first\n" + filler.String(),
		"middle.txt":  filler.String() + "a rareIdent in the middle, rareident too\n" + filler.String(),
		"last.txt":    filler.String() + "the end: rareIdent",
		"long.txt":    filler.String() + long + "rareIdent " + long + "\n" + filler.String(),
		"crlf.txt":    strings.ReplaceAll(filler.String()+"crlf rareIdent\n"+filler.String(), "\n", "\r\n"),
		"straddle.go": strings.Repeat("x", 20) + "\n" + strings.Repeat("y", 20) + " rareIdent straddles\n" + filler.String() + "func fooHandler() {}\n",
		"none.txt":    filler.String(),
	}
	for name, text := range files {
		os.WriteFile(filepath.Join(root, name), []byte(text), 0o644)
	}
	var mu sync.Mutex
	var blockBytes int64
	blockReadHook = func(_ string, n int64) {
		mu.Lock()
		blockBytes += n
		mu.Unlock()
	}
	t.Cleanup(func() { blockReadHook = nil })
	queries := []GrepOptions{
		{Pattern: "rareIdent"},
		{Pattern: "rareIdent", Mode: Count},
		{Pattern: "rareIdent", Mode: Content},
		{Pattern: "RAREIDENT", IgnoreCase: true, Mode: Content},
		{Pattern: `rare\w+`, Mode: Content, OnlyMatching: true, MaxLine: 12},
		{Pattern: "rareIdent", Mode: Content, MaxLine: 30},
		{Pattern: "rareIdent", Mode: Content, Keep: 3},
		{Pattern: "rareIdent", Mode: Content, Before: 2, After: 1},
		{Pattern: `rareIdent\s*$`, Mode: Content},
		{Pattern: `^\w*rareIdent`, Mode: Count},
		{Pattern: `rareIdent(.|\n)*Handler`, Multiline: true, Mode: Content},
		{Pattern: `Handler\(\)`, Mode: Content},
		{Pattern: `def line`, Mode: Content},
	}
	x, err := BuildIndex(t.Context(), openScope{}, root, "")
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, text := range files {
		total += int64(len(text))
	}
	ix := &Indexes{}
	ix.install(root, x)
	for _, q := range queries {
		scan, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		blockBytes = 0
		mu.Unlock()
		q.Indexes = ix
		idx, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		if idx.Index != Indexed {
			t.Fatalf("%q: index use %v", q.Pattern, idx.Index)
		}
		idx.Index = Scanned
		if !reflect.DeepEqual(scan, idx) {
			t.Fatalf("%+v: index gave\n%+v\nscan gave\n%+v", q, idx, scan)
		}
		mu.Lock()
		n := blockBytes
		mu.Unlock()
		if q.Pattern == "rareIdent" && q.Before == 0 && (n == 0 || n > total/4) {
			t.Fatalf("%+v: read %d bytes of blocks, of %d", q, n, total)
		}
	}
}
