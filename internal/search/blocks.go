package search

import (
	"bytes"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// blockSize is the least size of a block of lines: a text file bigger than that is
// indexed as blocks of whole lines, each with an id of its own, so that a search reads
// only the blocks that may hold a match of a big file most of whose parts cannot. A
// variable so that tests can make blocks tiny.
var blockSize = 16 << 10

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
func (f *indexedFile) blocks() int { return f.blk.count() }

// count returns how many index ids a file with table t takes: one per block, one when t is
// nil.
func (t *blockTable) count() int {
	if t == nil {
		return 1
	}
	return len(t.off)
}

// bounds returns the bytes of block i of a file of size n.
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
	// The buffers past len(bufs) are those of an earlier file's later blocks: keep them.
	bufs = bufs[:cap(bufs)]
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

// blockRead is what a search knows of a candidate file that the index holds: its record,
// and the candidates among ids of its index. check says the file's stat must be what the
// record says before its blocks alone are read (a walk); fresh, that the file is from a
// live list and no event named it since it was indexed: it is as indexed.
type blockRead struct {
	f     indexedFile
	cand  trigram.Bits
	check bool
	fresh bool
}

// blockReadHook, when set, is told of each file a search reads only blocks of, and how
// many bytes it read; for tests.
var blockReadHook func(path string, n int64)

// readBlocks searches only the candidate blocks of the file of j, which br describes;
// false when it must be read whole: the file is not as indexed, or a match may cross a
// line (multiline), or the search shows context lines. Without multiline, no match spans
// a line (compileMatcher rejects a pattern with a line break and takes '\n' out of its
// classes), and a line is within one block: the matches, line numbers and counts are
// those of reading the whole file.
func (g *grep) readBlocks(w *grepWorker, j *job, br *blockRead) bool {
	f := &br.f
	if f.blk == nil || f.binary || br.cand == nil || g.opts.Multiline ||
		g.opts.Mode == Content && (g.opts.Before > 0 || g.opts.After > 0) {
		return false
	}
	fd, err := openJob(g.scope, j, unix.O_RDONLY)
	if err != nil {
		return false // read whole, which counts it as unreadable
	}
	defer unix.Close(fd)
	// A fresh file is as indexed: no event named it since (see readKnown), so its size
	// and time are the index's, with no fstat.
	size, mtime := f.size, time.Unix(0, f.mtime)
	if !br.fresh {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != f.size ||
			br.check && !sameStat(&st, *f) {
			return false
		}
		size, mtime = st.Size, time.Unix(st.Mtim.Unix())
	}
	if readHook != nil {
		readHook(j.shown())
	}
	if g.opts.MaxFileSize > 0 && size > g.opts.MaxFileSize {
		g.tooLarge.Add(1)
		return true
	}
	// The runs of candidate blocks, each read with one pread and searched on its own.
	t := f.blk
	var read int64
	n, hits := 0, w.hits[:0]
	var out []Line
	lastNum := 0
	for b := 0; b < len(t.off); {
		if !br.cand.Has(f.id + uint32(b)) {
			b++
			continue
		}
		first := b
		for b < len(t.off) && br.cand.Has(f.id+uint32(b)) {
			b++
		}
		start, _ := t.bounds(first, f.size)
		_, end := t.bounds(b-1, f.size)
		size := int(end - start)
		if cap(w.buf) < size {
			w.buf = make([]byte, size+size/8+512)
		}
		data := w.buf[:size]
		for got := 0; got < size; {
			m, err := unix.Pread(fd, data[got:], start+int64(got))
			if err == unix.EINTR {
				continue
			}
			if err != nil || m == 0 {
				// Changed or unreadable since the check: read it whole, as a walk
				// would find it.
				return false
			}
			got += m
		}
		read += int64(size)
		base := int(t.line[first]) - 1
		switch g.opts.Mode {
		case FilesWithMatches:
			g.m.matchLines(data, w.find, func(_, _ int) bool {
				n++
				return false
			})
		case Count:
			g.m.matchLines(data, w.find, func(_, _ int) bool {
				n++
				return true
			})
		default:
			hits = hits[:0]
			ln := lineCounter{}
			g.m.matchLines(data, w.find, func(s, e int) bool {
				n++
				if len(out)+len(hits) < g.opts.Keep {
					hits = append(hits, span{s, e, base + ln.at(data, s)})
				}
				return true
			})
			if len(hits) > 0 {
				lines := contextLines(data, hits, 0, 0, g.opts.Keep, g.opts.MaxLine, g.m, g.opts.OnlyMatching)
				lines[0].Gap = lastNum > 0 && lines[0].Num > lastNum+1
				lastNum = lines[len(lines)-1].Num
				out = append(out, lines...)
			}
		}
		if n > 0 && g.opts.Mode == FilesWithMatches {
			break
		}
	}
	w.hits = hits
	if cap(w.buf) > 4<<20 {
		w.buf = nil
	}
	if blockReadHook != nil {
		blockReadHook(j.shown(), read)
	}
	g.searched.Add(1)
	if n == 0 {
		return true
	}
	g.files.Add(1)
	switch g.opts.Mode {
	case FilesWithMatches:
		g.top.add(FileMatch{Path: j.shown(), ModTime: mtime, Lines: 1})
	case Count:
		g.lines.Add(int64(n))
		g.top.add(FileMatch{Path: j.shown(), ModTime: mtime, Lines: n})
	default:
		g.lines.Add(int64(n))
		g.top.add(FileMatch{Path: j.shown(), ModTime: mtime, Lines: n, Output: out})
	}
	return true
}
