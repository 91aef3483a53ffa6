// Package trigram keeps which files hold which three-byte sequences, and turns a regular
// expression into the trigrams a matching file must hold, so that a search reads only the
// files that can match.
package trigram

import (
	"runtime"
	"slices"
	"sync"
)

// Trigram is three bytes, as they are (case and all), packed into 24 bits.
type Trigram uint32

// Seen is a set of trigrams, for finding the distinct trigrams of one file at a time
// without a map: 2 MiB, of which only the bits set are cleared again. Not safe for
// concurrent use; the zero value is ready.
type Seen struct{ bits *[1 << 24 / 64]uint64 }

// Distinct appends the distinct trigrams of data to buf[:0], in the order they first
// occur, and returns it; ok is false when there are more than max of them (max <= 0: no
// limit). s is empty again when it returns.
func (s *Seen) Distinct(data []byte, buf []Trigram, max int) (tris []Trigram, ok bool) {
	tris = buf[:0]
	if len(data) < 3 {
		return tris, true
	}
	if s.bits == nil {
		s.bits = new([1 << 24 / 64]uint64)
	}
	bits := s.bits
	t := uint32(data[0])<<8 | uint32(data[1])
	for _, b := range data[2:] {
		t = (t<<8 | uint32(b)) & 0xFFFFFF
		w, m := t/64, uint64(1)<<(t%64)
		if bits[w]&m == 0 {
			bits[w] |= m
			tris = append(tris, Trigram(t))
		}
	}
	for _, t := range tris {
		bits[t/64] = 0
	}
	if max > 0 && len(tris) > max {
		return tris[:0], false
	}
	return tris, true
}

var seenPool = sync.Pool{New: func() any { return new(Seen) }}

// Of returns the distinct trigrams of data, sorted, appended to buf[:0]; ok is false when
// there are more than max of them (max <= 0: no limit).
func Of(data []byte, buf []Trigram, max int) (tris []Trigram, ok bool) {
	s := seenPool.Get().(*Seen)
	tris, ok = s.Distinct(data, buf, max)
	seenPool.Put(s)
	slices.Sort(tris)
	return tris, ok
}

// Index maps trigrams to the ids of the files holding them: the segments of a file,
// mapped read-only (see [Writer] and [Open]), and the postings added in memory with
// [Index.Add]. Ids are given by the caller, in increasing order; an Index is not safe for
// concurrent use while it is being added to.
type Index struct {
	segs     []segment
	file     *mapping // keeps the segments' memory mapped; nil in memory
	mem      *memIndex
	postings int // in all
	ids      int // one past the largest id
}

// New returns an empty index, kept in memory.
func New() *Index { return &Index{} }

// Add records that the file id holds tris, which must be distinct. Ids must increase from
// call to call, and be at least the index's count of ids.
func (x *Index) Add(id uint32, tris []Trigram) {
	if x.mem == nil {
		x.mem = newMem(uint32(x.ids))
	}
	x.mem.add(id, tris)
	x.mem.drain()
	x.postings += len(tris)
	x.ids = max(x.ids, int(id)+1)
}

// Postings returns how many (trigram, file) pairs the index holds.
func (x *Index) Postings() int { return x.postings }

// IDs returns one past the largest id the index holds.
func (x *Index) IDs() int { return x.ids }

// HeapBytes is about what the index takes in the Go heap; MappedBytes is the size of
// the file whose mapping holds its segments.
func (x *Index) HeapBytes() int64 {
	n := int64(len(x.segs)) * 64
	if x.mem != nil {
		n += x.mem.heapBytes()
	}
	return n
}

// MappedBytes is the size of the file mapped to hold the index's segments.
func (x *Index) MappedBytes() int64 {
	if x.file == nil {
		return 0
	}
	return int64(len(x.file.data))
}

// Candidates returns which ids in [0, ids) may hold a match of q, as a bit set, or nil
// when q does not narrow (every file is a candidate).
func (x *Index) Candidates(q *Query) Bits {
	if q.Op == All {
		return nil
	}
	e := evaluator{x: x}
	b := e.eval(q)
	runtime.KeepAlive(x.file) // the segments' memory stays mapped until here
	return b
}

// evaluator evaluates a query on x, reusing the sets it is done with.
type evaluator struct {
	x    *Index
	free []Bits
}

// get returns an empty set of x's ids.
func (e *evaluator) get() Bits {
	if n := len(e.free); n > 0 {
		b := e.free[n-1]
		e.free = e.free[:n-1]
		clear(b)
		return b
	}
	return make(Bits, (e.x.ids+63)/64)
}

func (e *evaluator) put(b Bits) { e.free = append(e.free, b) }

// orList sets in b the ids holding t.
func (e *evaluator) orList(b Bits, t Trigram) {
	for i := range e.x.segs {
		e.x.segs[i].orInto(b, t)
	}
	if e.x.mem != nil {
		e.x.mem.orInto(b, t)
	}
}

// eval returns the ids that may match q. An And stops once no id is left.
func (e *evaluator) eval(q *Query) Bits {
	switch q.Op {
	case All:
		return full(e.x.ids)
	case None:
		return e.get()
	case And:
		var acc Bits
		and := func(b Bits) bool {
			if acc == nil {
				acc = b
			} else {
				acc.and(b)
				e.put(b)
			}
			return acc.empty()
		}
		for _, t := range q.Tri {
			b := e.get()
			e.orList(b, t)
			if and(b) {
				return acc
			}
		}
		for _, s := range q.Sub {
			if s.Op == All {
				continue
			}
			if and(e.eval(s)) {
				return acc
			}
		}
		if acc == nil {
			return full(e.x.ids)
		}
		return acc
	default: // Or
		acc := e.get()
		for _, t := range q.Tri {
			e.orList(acc, t)
		}
		for _, s := range q.Sub {
			b := e.eval(s)
			acc.or(b)
			e.put(b)
		}
		return acc
	}
}

// Bits is a set of file ids.
type Bits []uint64

// Has reports whether id is in the set; a nil set holds every id.
func (b Bits) Has(id uint32) bool {
	if b == nil {
		return true
	}
	return int(id/64) < len(b) && b[id/64]&(1<<(id%64)) != 0
}

func (b Bits) set(id uint32) {
	if int(id/64) < len(b) {
		b[id/64] |= 1 << (id % 64)
	}
}

func full(n int) Bits {
	b := make(Bits, (n+63)/64)
	for i := range b {
		b[i] = ^uint64(0)
	}
	return b
}

// empty reports whether b holds no id.
func (b Bits) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

func (b Bits) and(c Bits) {
	for i := range b {
		b[i] &= c[i]
	}
}

func (b Bits) or(c Bits) {
	for i := range b {
		b[i] |= c[i]
	}
}
