package search

import (
	"bytes"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// blockSize is the least size of a block of lines: a text file bigger than that is
// indexed as blocks of whole lines, each with an id of its own, so that a search reads
// only the blocks that may hold a match of a big file most of whose parts cannot. A
// variable so that tests can make blocks tiny.
var blockSize = 32 << 10

// blockTable says where the blocks of a file indexed as more than one start: for block
// i, its first byte and the number of its first line. The file's ids are consecutive,
// from its indexedFile.id.
type blockTable struct {
	off, line []uint32
}

// splitBlocks returns the blocks of data, or nil when it is one block: each ends just
// after a '\n' and is at least blockSize bytes, but the last, which ends at the end; a
// line longer than that is in one block.
func splitBlocks(data []byte) *blockTable {
	if len(data) <= blockSize {
		return nil
	}
	t := &blockTable{off: []uint32{0}, line: []uint32{1}}
	line := 1
	for s := 0; ; {
		from := s + blockSize - 1
		if from >= len(data) {
			break
		}
		nl := bytes.IndexByte(data[from:], '\n')
		if nl < 0 || from+nl+1 >= len(data) {
			break
		}
		e := from + nl + 1
		line += bytes.Count(data[s:e], []byte{'\n'})
		t.off = append(t.off, uint32(e))
		t.line = append(t.line, uint32(line))
		s = e
	}
	if len(t.off) == 1 {
		return nil
	}
	return t
}

// blocks returns how many ids the file has.
func (f *indexedFile) blocks() int {
	if f.blk == nil {
		return 1
	}
	return len(f.blk.off)
}

// blockBounds returns the bytes of block i of a file of size n.
func (t *blockTable) bounds(i int, n int64) (start, end int64) {
	start, end = int64(t.off[i]), n
	if i+1 < len(t.off) {
		end = int64(t.off[i+1])
	}
	return start, end
}

// blockTris returns, for each block of data as t splits it, its distinct trigrams,
// reusing bufs. Each block's trigrams are those of its bytes and of the two before, so
// that a trigram that ends in a block's first line (a line's start, after the '\n' before
// it) is that block's.
func blockTris(t *blockTable, data []byte, seen *trigram.Seen, bufs [][]trigram.Trigram) [][]trigram.Trigram {
	n := 1
	if t != nil {
		n = len(t.off)
	}
	for len(bufs) < n {
		bufs = append(bufs, nil)
	}
	bufs = bufs[:n]
	for i := range n {
		s, e := 0, len(data)
		if t != nil {
			s64, e64 := t.bounds(i, int64(len(data)))
			s, e = max(int(s64)-2, 0), int(e64)
		}
		bufs[i], _ = seen.Distinct(data[s:e], bufs[i], 0)
	}
	return bufs
}

// candidate reports whether the file f, with ids from f.id, is a candidate among cand:
// whether any of its blocks is. A multiline match may span blocks, each holding part of
// its trigrams: then a file of more than one block is always a candidate.
func candidate(cand trigram.Bits, f *indexedFile, multiline bool) bool {
	if f.blk == nil {
		return cand.Has(f.id)
	}
	if cand == nil || multiline {
		return true
	}
	for i := range uint32(len(f.blk.off)) {
		if cand.Has(f.id + i) {
			return true
		}
	}
	return false
}
