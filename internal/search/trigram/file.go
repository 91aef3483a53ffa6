package trigram

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// Format is the version of the file [Writer] writes; a file of another format is not read.
const Format = 3

// An index file is:
//
//	header   "BTRI", Format (uint32), 8 bytes zero
//	segments one after the other, ids increasing (see memIndex.encode)
//	extra    the caller's bytes (the search package keeps its file table there)
//	dir      where each segment starts (uint64 each)
//	footer   extra's offset and length, dir's offset (uint64), segments, ids (uint32),
//	         postings (uint64), a CRC-32C (uint32) of the segments' headers and tables,
//	         extra, dir and the footer before it, then "BTRE"
//
// All numbers are little endian. The posting bytes are not in the checksum, so that
// opening a big file reads only its tables; a list that is corrupt yields at worst wrong
// candidates within the index's ids, never a crash.
const (
	headerLen = 16
	footerLen = 48
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes an index to a file. Postings are added in memory until they take budget
// bytes, then written out as a segment to a scratch file beside it; Finish merges those
// segments into one (a few for a huge index), so that each trigram has one entry in one
// table rather than one in every segment.
type Writer struct {
	f        *os.File
	w        *bufio.Writer
	off      uint64
	crc      hash.Hash32
	budget   int64
	batch    int // pairs kept before they are added to the lists
	mem      *memIndex
	dir      []uint64
	ids      int
	postings int
	err      error

	scratch *os.File // the segments flushed, unlinked; nil until the first
	sw      *bufio.Writer
	soff    uint64
	sdir    []uint64 // where each segment starts in scratch

	// Pause, if set, is called now and then while Finish merges, to let others go first.
	Pause func()
}

// NewWriter starts an index in f, which must be empty, keeping at most about budget
// bytes of postings in memory.
func NewWriter(f *os.File, budget int64) *Writer {
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 1<<20), crc: crc32.New(castagnoli), budget: budget, batch: batch, mem: newMem(0)}
	var h [headerLen]byte
	copy(h[:], "BTRI")
	binary.LittleEndian.PutUint32(h[4:], Format)
	w.write(h[:])
	return w
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.w.Write(b)
	w.off += uint64(len(b))
}

// Add records that the file id holds tris, which must be distinct; ids must increase.
func (w *Writer) Add(id uint32, tris []Trigram) error {
	w.mem.add(id, tris)
	w.postings += len(tris)
	w.ids = max(w.ids, int(id)+1)
	if len(w.mem.pending) < w.batch {
		return w.err
	}
	w.mem.drain()
	if w.mem.heapBytes() >= w.budget {
		w.flush()
	}
	return w.err
}

// flush writes the postings in memory as a segment to the scratch file and starts the
// next.
func (w *Writer) flush() {
	w.mem.drain()
	if len(w.mem.tris) > 0 && w.err == nil {
		if w.scratch == nil {
			w.scratch, w.err = scratchFile(w.f)
			if w.err != nil {
				return
			}
			w.sw = bufio.NewWriterSize(w.scratch, 1<<20)
		}
		w.sdir = append(w.sdir, w.soff)
		put := func(b []byte) {
			if w.err == nil {
				_, w.err = w.sw.Write(b)
				w.soff += uint64(len(b))
			}
		}
		w.mem.encode(put, put, true)
	}
	w.mem = w.mem.next(uint32(w.ids))
}

// scratchFile is an unlinked file in near's directory.
func scratchFile(near *os.File) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(near.Name()), ".tri-scratch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// Close lets go of what an unfinished Writer holds; Finish does too.
func (w *Writer) Close() {
	if w.scratch != nil {
		w.scratch.Close()
		w.scratch, w.sw = nil, nil
	}
	w.mem = newMem(uint32(w.ids))
}

// segments writes the index's segments to f: the postings in memory as they are when
// nothing was flushed, else the flushed segments and those merged.
func (w *Writer) segments() {
	w.mem.drain()
	if w.scratch == nil {
		if len(w.mem.tris) > 0 {
			w.dir = append(w.dir, w.off)
			w.mem.encode(func(b []byte) {
				w.crc.Write(b)
				w.write(b)
			}, w.write, false)
		}
		return
	}
	w.flush()
	w.mem = nil // free before the merge
	if w.err == nil {
		w.err = w.sw.Flush()
	}
	if w.err != nil {
		return
	}
	data, err := unix.Mmap(int(w.scratch.Fd()), 0, int(w.soff), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		w.err = fmt.Errorf("map the index's segments: %w", err)
		return
	}
	defer unix.Munmap(data)
	var group []scratchSeg
	var size int
	for i, off := range w.sdir {
		end := w.soff
		if i+1 < len(w.sdir) {
			end = w.sdir[i+1]
		}
		s, ok := parseScratch(data[off:end])
		if !ok {
			w.err = errors.New("index segment unreadable")
			return
		}
		if len(group) > 0 && size+len(s.post) > mergeLimit {
			w.merge(group)
			group, size = nil, 0
		}
		group = append(group, s)
		size += len(s.post)
	}
	w.merge(group)
}

// Finish writes the last segment, extra and the footer, and returns the index, mapped
// from the file; f may be closed then.
func (w *Writer) Finish(extra []byte) (*Index, error) {
	w.segments()
	w.Close()
	extraOff := w.off
	w.crc.Write(extra)
	w.write(extra)
	dirOff := w.off
	dir := make([]byte, 0, 8*len(w.dir))
	for _, o := range w.dir {
		dir = binary.LittleEndian.AppendUint64(dir, o)
	}
	w.crc.Write(dir)
	w.write(dir)
	var f [footerLen]byte
	binary.LittleEndian.PutUint64(f[0:], extraOff)
	binary.LittleEndian.PutUint64(f[8:], uint64(len(extra)))
	binary.LittleEndian.PutUint64(f[16:], dirOff)
	binary.LittleEndian.PutUint32(f[24:], uint32(len(w.dir)))
	binary.LittleEndian.PutUint32(f[28:], uint32(w.ids))
	binary.LittleEndian.PutUint64(f[32:], uint64(w.postings))
	w.crc.Write(f[:40])
	binary.LittleEndian.PutUint32(f[40:], w.crc.Sum32())
	copy(f[44:], "BTRE")
	w.write(f[:])
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return nil, w.err
	}
	x, _, err := Open(w.f)
	return x, err
}

// ErrFormat is returned by [Open] for a file that is not a whole index of this format.
var ErrFormat = errors.New("not an index file of this format")

// Open maps the index file f read-only and checks its tables; it returns the index and
// the extra bytes given to [Writer.Finish] (in the mapping: valid while the index is
// reachable). f may be closed then. The mapping is undone once the index is no longer
// reachable.
func Open(f *os.File) (*Index, []byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size < headerLen+footerLen || size != int64(int(size)) {
		return nil, nil, ErrFormat
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map the index: %w", err)
	}
	m := &mapping{data: data}
	runtime.AddCleanup(m, func(d []byte) { _ = unix.Munmap(d) }, data)
	x, extra, ok := parse(data)
	if !ok {
		return nil, nil, ErrFormat
	}
	x.file = m
	return x, extra, nil
}

func parse(data []byte) (*Index, []byte, bool) {
	if string(data[:4]) != "BTRI" || binary.LittleEndian.Uint32(data[4:]) != Format || binary.LittleEndian.Uint64(data[8:]) != 0 {
		return nil, nil, false
	}
	f := data[len(data)-footerLen:]
	if string(f[44:]) != "BTRE" {
		return nil, nil, false
	}
	end := uint64(len(data) - footerLen)
	extraOff, extraLen := binary.LittleEndian.Uint64(f), binary.LittleEndian.Uint64(f[8:])
	dirOff, nseg := binary.LittleEndian.Uint64(f[16:]), uint64(binary.LittleEndian.Uint32(f[24:]))
	ids, postings := int(binary.LittleEndian.Uint32(f[28:])), binary.LittleEndian.Uint64(f[32:])
	if extraOff < headerLen || extraOff > end || extraLen > end-extraOff || extraOff+extraLen != dirOff ||
		nseg > (end-dirOff)/8 || dirOff+8*nseg != end || postings > 1<<40 {
		return nil, nil, false
	}
	crc := crc32.New(castagnoli)
	x := &Index{ids: ids, postings: int(postings)}
	at := uint64(headerLen)
	next := uint32(0)
	for i := range nseg {
		off := binary.LittleEndian.Uint64(data[dirOff+8*i:])
		if off != at || off >= extraOff {
			return nil, nil, false
		}
		s, n, ok := parseSegment(data[off:extraOff], ids)
		if !ok || s.base < next {
			return nil, nil, false
		}
		next = s.base + s.count
		crc.Write(data[off : off+segHeader+uint64(len(s.table))])
		x.segs = append(x.segs, s)
		at += uint64(n)
	}
	if at != extraOff {
		return nil, nil, false
	}
	crc.Write(data[extraOff:end])
	crc.Write(f[:40])
	if crc.Sum32() != binary.LittleEndian.Uint32(f[40:]) {
		return nil, nil, false
	}
	return x, data[extraOff : extraOff+extraLen], true
}

// mapping is a file mapped into memory, unmapped by a cleanup once unreachable.
type mapping struct{ data []byte }

// Bytes returns the index file's bytes, for copying; nil for an index in memory. They
// stay valid while x is reachable.
func (x *Index) Bytes() []byte {
	if x.file == nil {
		return nil
	}
	return x.file.data
}
