package trigram

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// mergeLimit is about how many posting bytes of flushed segments are merged into one:
// a segment's list offsets must stay under 2 GiB.
var mergeLimit = 1 << 30

// scratchSeg is a segment in the scratch form (see memIndex.encode): every list deltas,
// and the last id of each list.
type scratchSeg struct {
	segment
	lasts []byte
}

// parseScratch reads b, a whole segment in the scratch form.
func parseScratch(b []byte) (scratchSeg, bool) {
	if len(b) < segHeader {
		return scratchSeg{}, false
	}
	base := binary.LittleEndian.Uint32(b)
	count := binary.LittleEndian.Uint32(b[4:])
	ntri := int(binary.LittleEndian.Uint32(b[8:]))
	npost := int(binary.LittleEndian.Uint32(b[12:]))
	if segHeader+12*ntri+npost != len(b) {
		return scratchSeg{}, false
	}
	t := b[segHeader:]
	return scratchSeg{segment{base: base, count: count, table: t[:8*ntri], post: t[12*ntri:]}, t[8*ntri : 12*ntri]}, true
}

// merge writes group, segments of increasing ids in the scratch form, to the index as
// one segment: each trigram's lists joined into one, as deltas or a bitmap, whichever is
// smaller. A list's deltas are copied as they are but for its first, which is counted
// again from the last id of the list before. The table is written once the lists are, in
// the room left for it.
func (w *Writer) merge(group []scratchSeg) {
	if w.err != nil || len(group) == 0 {
		return
	}
	present := make([]uint64, 1<<24/64)
	for i := range group {
		for k := range len(group[i].table) / 8 {
			t := group[i].tri(k)
			present[t/64] |= 1 << (t % 64)
		}
	}
	ntri := 0
	for _, p := range present {
		ntri += bits.OnesCount64(p)
	}
	last := &group[len(group)-1]
	base, count := group[0].base, last.base+last.count-group[0].base
	start := w.off
	head := make([]byte, segHeader+8*ntri)
	w.write(head) // room for the table, written at the end
	bmLen := int(count+7) / 8
	var bm []byte
	var pl plist
	at := make([]int, len(group)) // the next position in each segment's table
	off, k := uint64(0), 0
	for wi, word := range present {
		for word != 0 {
			t := Trigram(wi*64 + bits.TrailingZeros64(word))
			word &= word - 1
			pl = plist{buf: pl.buf[:0]}
			for i := range group {
				s := &group[i]
				if at[i] >= len(s.table)/8 || s.tri(at[i]) != t {
					continue
				}
				list, _ := s.list(at[i])
				v, used := firstDelta(list)
				pl.add(s.base+v, base)
				pl.appendNibbles(list, used, nibbles(list))
				pl.next = binary.LittleEndian.Uint32(s.lasts[4*at[i]:]) + 1
				at[i]++
			}
			e := head[segHeader+8*k:]
			binary.LittleEndian.PutUint32(e, uint32(t))
			if len(pl.buf) > bmLen {
				if bm == nil {
					bm = make([]byte, bmLen)
				}
				clear(bm)
				decodeDeltas(pl.buf, 2*len(pl.buf)-b2i(pl.half), base, func(id uint32) {
					if i := id - base; i < count {
						bm[i/8] |= 1 << (i % 8)
					}
				})
				binary.LittleEndian.PutUint32(e[4:], uint32(off)|1<<31)
				w.write(bm)
				off += uint64(bmLen)
			} else {
				if pl.half {
					pl.buf[len(pl.buf)-1] |= 8 << 4
				}
				binary.LittleEndian.PutUint32(e[4:], uint32(off))
				w.write(pl.buf)
				off += uint64(len(pl.buf))
			}
			k++
			if k%4096 == 0 && w.Pause != nil {
				w.Pause()
			}
			if off >= 1<<31 {
				w.err = errors.New("index segment over 2 GiB")
				return
			}
		}
	}
	binary.LittleEndian.PutUint32(head, base)
	binary.LittleEndian.PutUint32(head[4:], count)
	binary.LittleEndian.PutUint32(head[8:], uint32(ntri))
	binary.LittleEndian.PutUint32(head[12:], uint32(off))
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err == nil {
		_, w.err = w.f.WriteAt(head, int64(start))
	}
	w.crc.Write(head)
	w.dir = append(w.dir, start)
}

// nibbles is how many nibbles the deltas list b holds: a last high half of 0x8 is not one.
func nibbles(b []byte) int {
	if len(b) > 0 && b[len(b)-1]>>4 == 8 {
		return 2*len(b) - 1
	}
	return 2 * len(b)
}

// firstDelta decodes the first value of the deltas list b, and how many nibbles it took.
func firstDelta(b []byte) (v uint32, used int) {
	for used < 2*len(b) && used < 11 {
		nib := b[used/2] >> (4 * (used & 1)) & 15
		v |= uint32(nib&7) << (3 * used)
		used++
		if nib&8 == 0 {
			break
		}
	}
	return v, used
}

// appendNibbles appends the nibbles [from, to) of the deltas list src to p, as they are.
func (p *plist) appendNibbles(src []byte, from, to int) {
	if from < to && p.half {
		p.buf[len(p.buf)-1] |= (src[from/2] >> (4 * (from & 1)) & 15) << 4
		p.half = false
		from++
	}
	if from >= to {
		return
	}
	if from%2 == 0 {
		p.buf = append(p.buf, src[from/2:to/2]...)
		if to%2 == 1 {
			p.buf = append(p.buf, src[to/2]&15)
			p.half = true
		}
		return
	}
	for ; from+1 < to; from += 2 {
		p.buf = append(p.buf, src[from/2]>>4|src[from/2+1]<<4)
	}
	if from < to {
		p.buf = append(p.buf, src[from/2]>>4)
		p.half = true
	}
}
