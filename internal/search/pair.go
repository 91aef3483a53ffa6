package search

import (
	"encoding/binary"
	"math/bits"
)

// pairScan finds a literal by two of its bytes at once, sixteen starting positions at a
// time, eight to a 64-bit word, and compares the whole literal only where both are found.
// Where every byte of a literal is common in source code (the e of "errnotexist", the r
// and t of "return"), memchr on one of them stops every few bytes; two together rarely
// agree by chance. It ignores ASCII case by the bit that tells a letter's two cases apart
// (0x20), so it serves a case-insensitive literal as well, when every byte of it is ASCII
// and the buffer holds no character that folds to one of them from outside ASCII (see
// foldFinder).
type pairScan struct {
	lit    []byte // lower case when fold
	fold   bool
	a1, a2 int    // where the two bytes looked for lie in lit, a1 <= a2
	m1, m2 uint64 // 0x20 in each byte when that byte is a letter compared folded
	v1, v2 uint64 // that byte in each byte
}

// SWAR constants: 0x7f, 0x80 and 0x01 in every byte of a word.
const (
	low7 = 0x7f7f7f7f7f7f7f7f
	high = 0x8080808080808080
	ones = 0x0101010101010101
)

// newPairScan returns a scan for lit (lower case when fold) on its two rarest bytes
// (byteRank), or on its one byte twice.
func newPairScan(lit string, fold bool) *pairScan {
	a1, a2, r1, r2 := -1, -1, 1<<30, 1<<30
	for i := 0; i < len(lit); i++ {
		switch r := byteRank(lit[i]); {
		case r < r1:
			a2, r2 = a1, r1
			a1, r1 = i, r
		case r < r2:
			a2, r2 = i, r
		}
	}
	if a2 < 0 {
		a2 = a1
	}
	if a1 > a2 {
		a1, a2 = a2, a1
	}
	mask := func(c byte) uint64 {
		if fold && 'a' <= c && c <= 'z' {
			return 0x20 * ones
		}
		return 0
	}
	return &pairScan{
		lit: []byte(lit), fold: fold, a1: a1, a2: a2,
		m1: mask(lit[a1]), m2: mask(lit[a2]),
		v1: uint64(lit[a1]) * ones, v2: uint64(lit[a2]) * ones,
	}
}

// index returns where the first instance of the literal at or after from starts, or -1.
func (p *pairScan) index(buf []byte, from int) int {
	last := len(buf) - len(p.lit) // the last start the literal fits
	if from > last {
		return -1
	}
	m1, m2, v1, v2 := p.m1, p.m2, p.v1, p.v2
	b1, b2 := buf[p.a1:], buf[p.a2:] // b1[s] and b2[s]: the two bytes of a start s
	s := from
	for ; s+16 <= len(b2); s += 16 {
		w1, w2 := b1[s:s+16], b2[s:s+16]
		// A byte of z is zero where both bytes are found; hx and hy have 0x80 in just
		// those bytes.
		x1 := (binary.LittleEndian.Uint64(w1) | m1) ^ v1
		x2 := (binary.LittleEndian.Uint64(w2) | m2) ^ v2
		y1 := (binary.LittleEndian.Uint64(w1[8:]) | m1) ^ v1
		y2 := (binary.LittleEndian.Uint64(w2[8:]) | m2) ^ v2
		hx, hy := zeroBytes(x1|x2), zeroBytes(y1|y2)
		if hx|hy == 0 {
			continue
		}
		if at, done := p.check(buf, s, hx, last); done {
			return at
		}
		if at, done := p.check(buf, s+8, hy, last); done {
			return at
		}
	}
	for ; s <= last; s++ {
		if p.at(buf, s) {
			return s
		}
	}
	return -1
}

// zeroBytes returns 0x80 in each byte of z that is zero, and 0 in the others.
func zeroBytes(z uint64) uint64 {
	return ^((z&low7 + low7) | z) & high
}

// check compares the literal with buf at base+i for each byte i of h that has 0x80, in
// order: done is true once it is found (at) or a start lies past last (at is -1).
func (p *pairScan) check(buf []byte, base int, h uint64, last int) (at int, done bool) {
	for ; h != 0; h &= h - 1 {
		s := base + bits.TrailingZeros64(h)/8
		if s > last {
			return -1, true
		}
		if p.at(buf, s) {
			return s, true
		}
	}
	return 0, false
}

// at reports whether the literal starts at s (which leaves room for it).
func (p *pairScan) at(buf []byte, s int) bool {
	b := buf[s : s+len(p.lit)]
	if p.fold {
		return equalFoldASCII(b, p.lit)
	}
	return string(b) == string(p.lit)
}
