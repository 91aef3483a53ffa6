package trigram

import (
	"encoding/binary"
	"math"
	"slices"
)

// A posting list is the sorted ids of the files holding one trigram, within a segment
// whose ids are [base, base+count). It is kept in one of two forms, whichever is smaller:
//
//   - deltas: the first id minus base, then each id minus the one before minus one, each
//     in 3-bit groups, low group first, one group a nibble with its high bit set when
//     more groups follow; nibbles fill a byte low half first, and a last half byte left
//     over is 0x8 (a group that never ends, which is dropped);
//   - a bitmap: bit i (byte i/8, bit i%8) is set when base+i holds the trigram.
//
// On Go source the deltas take about 0.8 bytes per posting, and trigrams found in more
// than about one file in eight are smaller as bitmaps.

// plist is a posting list being added to, in the deltas form.
type plist struct {
	buf  []byte
	next uint32 // the last id added, plus one; 0 when empty
	half bool   // the high half of the last byte is free
}

func (p *plist) add(id, base uint32) {
	v := id - base
	if p.next != 0 {
		v = id - p.next
	}
	p.next = id + 1
	for {
		nib := byte(v & 7)
		v >>= 3
		if v != 0 {
			nib |= 8
		}
		if p.half {
			p.buf[len(p.buf)-1] |= nib << 4
			p.half = false
		} else {
			p.buf = append(p.buf, nib)
			p.half = true
		}
		if v == 0 {
			return
		}
	}
}

// decodeDeltas calls fn with each id of a deltas list of nibbles nibbles.
func decodeDeltas(b []byte, nibbles int, base uint32, fn func(uint32)) {
	var v uint32
	shift := uint(0)
	id, first := base, true
	for i := range nibbles {
		nib := b[i/2] >> (4 * (i & 1)) & 15
		v |= uint32(nib&7) << shift
		shift += 3
		if nib&8 != 0 {
			if shift > 33 {
				return // corrupt: no id is that far
			}
			continue
		}
		if first {
			id, first = base+v, false
		} else {
			id += v
		}
		fn(id)
		id++
		v, shift = 0, 0
	}
}

// orDeltas sets in b each id below limit of a deltas list of nibbles nibbles from base:
// what decodeDeltas gives, a byte at a time and with no call for each id, and a whole
// byte at once where it holds two deltas under 8 (most of them in a list of common
// trigrams) or one under 64. Decoding is most of what a search's plan costs.
func orDeltas(b Bits, list []byte, nibbles int, base, limit uint32) {
	limit = min(limit, uint32(min(len(b)*64, math.MaxUint32)))
	next := base // the id a delta of 0 gives
	var v uint32
	shift := uint(0)
	// end ends the delta in v: it sets its id in b.
	end := func() {
		id := next + v
		if id < limit {
			b[id/64] |= 1 << (id % 64)
		}
		next = id + 1
		v, shift = 0, 0
	}
	whole := nibbles / 2
	for _, c := range list[:whole] {
		if shift == 0 {
			switch c & 0x88 {
			case 0: // two deltas of one group each
				v = uint32(c & 7)
				end()
				v = uint32(c >> 4)
				end()
				continue
			case 0x08: // one delta of two groups
				v = uint32(c&7) | uint32(c>>4&7)<<3
				end()
				continue
			}
		}
		v |= uint32(c&7) << shift
		shift += 3
		if c&0x08 == 0 {
			end()
		}
		v |= uint32(c>>4&7) << shift
		shift += 3
		if c&0x80 == 0 {
			end()
		} else if shift > 33 {
			return // corrupt: no id is that far
		}
	}
	if nibbles&1 != 0 { // the low half of one more byte
		v |= uint32(list[whole]&7) << shift
		if list[whole]&0x08 == 0 {
			end()
		}
	}
}

// orBitmap sets in b the ids of a bitmap list of the segment of count ids from base.
func orBitmap(b Bits, bm []byte, base, count uint32) {
	for k := 0; k < len(bm); k += 8 {
		var w uint64
		if k+8 <= len(bm) {
			w = binary.LittleEndian.Uint64(bm[k:])
		} else {
			var tmp [8]byte
			copy(tmp[:], bm[k:])
			w = binary.LittleEndian.Uint64(tmp[:])
		}
		if left := int64(count) - int64(k)*8; left < 64 {
			w &= 1<<max(left, 0) - 1
		}
		if w == 0 {
			continue
		}
		pos := uint64(base) + uint64(k)*8
		i, s := pos/64, pos%64
		if i < uint64(len(b)) {
			b[i] |= w << s
		}
		if s != 0 && i+1 < uint64(len(b)) {
			b[i+1] |= w >> (64 - s)
		}
	}
}

// memIndex is the posting lists added in memory, from id base on. Postings are added in
// batches: a batch of (trigram, id) pairs sorted by trigram (stably, so ids stay in order)
// reaches each list once, rather than once per posting.
type memIndex struct {
	slot    map[Trigram]int32
	lists   []plist
	tris    []Trigram // by slot
	base    uint32
	bytes   int64 // capacity of the lists' buffers
	count   uint32
	pending []uint64 // trigram<<32 | id
	scratch []uint64
}

const batch = 1 << 19

func newMem(base uint32) *memIndex {
	return &memIndex{slot: map[Trigram]int32{}, base: base}
}

// next returns an empty memIndex from id base on that takes over m's arrays and map,
// which m, drained and encoded, no longer needs: a build that flushes every batch or two
// makes them once, not once a segment (they were three quarters of what it allocated).
func (m *memIndex) next(base uint32) *memIndex {
	clear(m.slot)
	clear(m.lists) // let go of the lists' buffers
	return &memIndex{
		slot: m.slot, lists: m.lists[:0], tris: m.tris[:0], base: base,
		pending: m.pending[:0], scratch: m.scratch,
	}
}

// add adds the postings of id to the batch; drain adds the batch to the lists.
func (m *memIndex) add(id uint32, tris []Trigram) {
	for _, t := range tris {
		m.pending = append(m.pending, uint64(t)<<32|uint64(id))
	}
	m.count = max(m.count, id+1-m.base)
}

func (m *memIndex) drain() {
	if len(m.pending) == 0 {
		return
	}
	p := m.pending
	if len(p) > 64 {
		// Two passes of a radix sort on the trigram's 24 bits, 12 at a time.
		if cap(m.scratch) < len(p) {
			m.scratch = make([]uint64, len(p), cap(p))
		}
		tmp := m.scratch[:len(p)]
		for _, shift := range []uint{32, 44} {
			var counts [1 << 12]int
			for _, v := range p {
				counts[v>>shift&0xFFF]++
			}
			sum := 0
			for i, c := range counts {
				counts[i] = sum
				sum += c
			}
			for _, v := range p {
				k := v >> shift & 0xFFF
				tmp[counts[k]] = v
				counts[k]++
			}
			p, tmp = tmp, p
		}
	} else {
		slices.SortStableFunc(p, func(a, b uint64) int { return int(a>>32) - int(b>>32) })
	}
	var pl *plist
	last := Trigram(1 << 31)
	for _, v := range p {
		t := Trigram(v >> 32)
		if t != last {
			if pl != nil {
				m.bytes += int64(cap(pl.buf))
			}
			s, ok := m.slot[t]
			if !ok {
				s = int32(len(m.lists))
				m.slot[t] = s
				m.lists = append(m.lists, plist{})
				m.tris = append(m.tris, t)
			}
			pl, last = &m.lists[s], t
			m.bytes -= int64(cap(pl.buf))
		}
		pl.add(uint32(v), m.base)
	}
	if pl != nil {
		m.bytes += int64(cap(pl.buf))
	}
	m.pending = m.pending[:0] // an even number of passes left the pairs sorted in place
}

func (m *memIndex) heapBytes() int64 {
	return m.bytes + int64(len(m.lists))*(int64(40+4)+16) + 8*int64(cap(m.pending)+cap(m.scratch))
}

func (m *memIndex) orInto(b Bits, t Trigram) {
	s, ok := m.slot[t]
	if !ok {
		return
	}
	p := &m.lists[s]
	n := 2 * len(p.buf)
	if p.half {
		n--
	}
	orDeltas(b, p.buf, n, m.base, math.MaxUint32)
}

// encode gives the segment of m, drained, to head (its header and table) then post (its
// posting lists, one call each).
//
// A segment is: base, count, trigrams, posting bytes (4 little-endian uint32 each); a
// table of 8 bytes per trigram, sorted: the trigram (uint32) and where its list starts
// among the posting bytes (uint32, the high bit set for a bitmap); then the posting
// bytes. A list ends where the next begins.
//
// In the scratch form, which only [Writer.merge] reads, every list is deltas, and the
// table is followed by the last id of each list (uint32 each).
func (m *memIndex) encode(head, post func([]byte), scratch bool) {
	order := make([]int32, len(m.tris))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return int(m.tris[a]) - int(m.tris[b]) })
	bmLen := int(m.count+7) / 8
	if scratch {
		bmLen = math.MaxInt
	}
	entry := 8
	if scratch {
		entry = 12
	}
	out := make([]byte, segHeader+entry*len(order))
	binary.LittleEndian.PutUint32(out, m.base)
	binary.LittleEndian.PutUint32(out[4:], m.count)
	binary.LittleEndian.PutUint32(out[8:], uint32(len(order)))
	off := uint32(0)
	lasts := out[segHeader+8*len(order):]
	for k, s := range order {
		p := &m.lists[s]
		binary.LittleEndian.PutUint32(out[segHeader+8*k:], uint32(m.tris[s]))
		if scratch {
			binary.LittleEndian.PutUint32(lasts[4*k:], p.next-1)
		}
		if len(p.buf) > bmLen {
			binary.LittleEndian.PutUint32(out[segHeader+8*k+4:], off|1<<31)
			off += uint32(bmLen)
		} else {
			binary.LittleEndian.PutUint32(out[segHeader+8*k+4:], off)
			off += uint32(len(p.buf))
		}
	}
	binary.LittleEndian.PutUint32(out[12:], off)
	head(out)
	var bm []byte
	for _, s := range order {
		p := &m.lists[s]
		if len(p.buf) > bmLen {
			if bm == nil {
				bm = make([]byte, bmLen)
			}
			clear(bm)
			decodeDeltas(p.buf, 2*len(p.buf)-b2i(p.half), m.base, func(id uint32) {
				i := id - m.base
				bm[i/8] |= 1 << (i % 8)
			})
			post(bm)
		} else {
			if p.half {
				p.buf[len(p.buf)-1] |= 8 << 4
			}
			post(p.buf)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// segment is an encoded segment, in a mapped file or in memory.
type segment struct {
	base, count uint32
	table, post []byte
}

const segHeader = 16

// parseSegment reads the segment at the start of b and checks that its table is sorted
// and its lists lie within it; it returns the segment and its size.
func parseSegment(b []byte, ids int) (segment, int, bool) {
	if len(b) < segHeader {
		return segment{}, 0, false
	}
	base := binary.LittleEndian.Uint32(b)
	count := binary.LittleEndian.Uint32(b[4:])
	ntri := uint64(binary.LittleEndian.Uint32(b[8:]))
	npost := uint64(binary.LittleEndian.Uint32(b[12:]))
	size := segHeader + 8*ntri + npost
	if size > uint64(len(b)) || uint64(base)+uint64(count) > uint64(ids) || npost >= 1<<31 {
		return segment{}, 0, false
	}
	s := segment{base: base, count: count, table: b[segHeader : segHeader+8*ntri], post: b[segHeader+8*ntri : size]}
	prevTri, prevOff := int64(-1), uint32(0)
	for k := 0; k < len(s.table); k += 8 {
		t := binary.LittleEndian.Uint32(s.table[k:])
		off := binary.LittleEndian.Uint32(s.table[k+4:]) &^ (1 << 31)
		if int64(t) <= prevTri || t >= 1<<24 || off < prevOff || uint64(off) > npost {
			return segment{}, 0, false
		}
		prevTri, prevOff = int64(t), off
	}
	return s, int(size), true
}

// find returns the position of t in s's table, or -1.
func (s *segment) find(t Trigram) int {
	n := len(s.table) / 8
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if Trigram(binary.LittleEndian.Uint32(s.table[8*mid:])) < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == n || Trigram(binary.LittleEndian.Uint32(s.table[8*lo:])) != t {
		return -1
	}
	return lo
}

// tri is the trigram at position k of s's table.
func (s *segment) tri(k int) Trigram { return Trigram(binary.LittleEndian.Uint32(s.table[8*k:])) }

// list returns the list at position k of s's table, and whether it is a bitmap (cut to
// the segment's ids).
func (s *segment) list(k int) (list []byte, bitmap bool) {
	raw := binary.LittleEndian.Uint32(s.table[8*k+4:])
	start, end := raw&^(1<<31), uint32(len(s.post))
	if 8*(k+1) < len(s.table) {
		end = binary.LittleEndian.Uint32(s.table[8*k+12:]) &^ (1 << 31)
	}
	list = s.post[start:end]
	if raw&(1<<31) == 0 {
		return list, false
	}
	if len(list) > int(s.count+7)/8 {
		list = list[:(s.count+7)/8]
	}
	return list, true
}

// orInto sets in b the ids of s holding t.
func (s *segment) orInto(b Bits, t Trigram) {
	k := s.find(t)
	if k < 0 {
		return
	}
	list, bitmap := s.list(k)
	if bitmap {
		orBitmap(b, list, s.base, s.count)
		return
	}
	orDeltas(b, list, 2*len(list), s.base, s.base+s.count)
}
