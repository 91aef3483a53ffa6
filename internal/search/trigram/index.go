// Package trigram keeps which files hold which three-byte sequences, and turns a regular
// expression into the trigrams a matching file must hold, so that a search reads only the
// files that can match.
package trigram

import (
	"slices"
)

// Trigram is three bytes, ASCII letters folded to lower case, packed into 24 bits.
type Trigram uint32

func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// Of returns the distinct trigrams of data, sorted, appended to buf[:0]; ok is false when
// there are more than max of them (max <= 0: no limit).
func Of(data []byte, buf []Trigram, max int) (tris []Trigram, ok bool) {
	tris = buf[:0]
	if len(data) < 3 {
		return tris, true
	}
	seen := make(map[Trigram]struct{}, min(len(data), 4096))
	t := Trigram(fold(data[0]))<<8 | Trigram(fold(data[1]))
	for _, b := range data[2:] {
		t = (t<<8 | Trigram(fold(b))) & 0xFFFFFF
		if _, dup := seen[t]; !dup {
			seen[t] = struct{}{}
			if max > 0 && len(seen) > max {
				return tris[:0], false
			}
			tris = append(tris, t)
		}
	}
	slices.Sort(tris)
	return tris, true
}

// Index maps trigrams to the ids of the files holding them. Ids are given by the caller,
// in increasing order; an Index is not safe for concurrent use while it is being added to.
type Index struct {
	post     map[Trigram][]uint32
	postings int // in all
	ids      int // one past the largest id added
}

// New returns an empty index.
func New() *Index { return &Index{post: map[Trigram][]uint32{}} }

// Add records that the file id holds tris. Ids must increase from call to call.
func (x *Index) Add(id uint32, tris []Trigram) {
	for _, t := range tris {
		x.post[t] = append(x.post[t], id)
	}
	x.postings += len(tris)
	x.ids = max(x.ids, int(id)+1)
}

// Postings returns how many (trigram, file) pairs the index holds: about 4 bytes each.
func (x *Index) Postings() int { return x.postings }

// Candidates returns which ids in [0, ids) may hold a match of q, as a bit set, or nil
// when q does not narrow (every file is a candidate).
func (x *Index) Candidates(q *Query) Bits {
	if q.Op == All {
		return nil
	}
	return x.eval(q)
}

func (x *Index) eval(q *Query) Bits {
	switch q.Op {
	case All:
		return full(x.ids)
	case None:
		return make(Bits, (x.ids+63)/64)
	case And:
		var acc Bits
		for _, t := range q.Tri {
			b := x.list(t)
			if acc == nil {
				acc = b
			} else {
				acc.and(b)
			}
		}
		for _, s := range q.Sub {
			if s.Op == All {
				continue
			}
			b := x.eval(s)
			if acc == nil {
				acc = b
			} else {
				acc.and(b)
			}
		}
		if acc == nil {
			return full(x.ids)
		}
		return acc
	default: // Or
		acc := make(Bits, (x.ids+63)/64)
		for _, t := range q.Tri {
			acc.or(x.list(t))
		}
		for _, s := range q.Sub {
			acc.or(x.eval(s))
		}
		return acc
	}
}

func (x *Index) list(t Trigram) Bits {
	b := make(Bits, (x.ids+63)/64)
	for _, id := range x.post[t] {
		b[id/64] |= 1 << (id % 64)
	}
	return b
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

func full(n int) Bits {
	b := make(Bits, (n+63)/64)
	for i := range b {
		b[i] = ^uint64(0)
	}
	return b
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

// Lists returns the posting lists by trigram, for saving; they must not be changed.
func (x *Index) Lists() (lists map[Trigram][]uint32, ids int) { return x.post, x.ids }

// FromLists returns the index of the posting lists of [Index.Lists].
func FromLists(lists map[Trigram][]uint32, ids int) *Index {
	x := &Index{post: lists, ids: ids}
	for _, l := range lists {
		x.postings += len(l)
	}
	return x
}
