package trigram

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// postingSet is a random set of postings: for each file id, its trigrams.
type postingSet struct {
	ids  []uint32
	tris [][]Trigram
	want map[Trigram][]uint32
}

// randomPostings makes n files with ids from start, some gaps between them; each file
// holds each of a few dense trigrams with probability dense, and some sparse ones.
func randomPostings(rng *rand.Rand, start uint32, n int, dense float64) postingSet {
	s := postingSet{want: map[Trigram][]uint32{}}
	id := start
	for range n {
		var tris []Trigram
		for t := range Trigram(12) {
			if rng.Float64() < dense {
				tris = append(tris, t)
			}
		}
		for range rng.IntN(20) {
			t := Trigram(100 + rng.IntN(3000))
			if !slices.Contains(tris, t) {
				tris = append(tris, t)
			}
		}
		if rng.IntN(50) == 0 {
			tris = append(tris, 0xFFFFFF) // the largest trigram
		}
		rng.Shuffle(len(tris), func(i, j int) { tris[i], tris[j] = tris[j], tris[i] })
		s.ids = append(s.ids, id)
		s.tris = append(s.tris, tris)
		for _, t := range tris {
			s.want[t] = append(s.want[t], id)
		}
		id += 1 + uint32(rng.IntN(3)/2*rng.IntN(200)) // mostly consecutive, some far apart
	}
	return s
}

// check fails unless x gives, for each trigram of s and a few absent ones, exactly the
// ids of s holding it.
func (s postingSet) check(t *testing.T, x *Index, what string) {
	t.Helper()
	ids := 0
	if len(s.ids) > 0 {
		ids = int(s.ids[len(s.ids)-1]) + 1
	}
	if x.IDs() != ids {
		t.Fatalf("%s: %d ids, want %d", what, x.IDs(), ids)
	}
	tris := []Trigram{5000, 0xABCDEF}
	for tri := range s.want {
		tris = append(tris, tri)
	}
	for _, tri := range tris {
		b := x.Candidates(&Query{Op: And, Tri: []Trigram{tri}})
		var got []uint32
		for w, bits := range b {
			for k := range uint32(64) {
				if bits&(1<<k) != 0 {
					got = append(got, uint32(w)*64+k)
				}
			}
		}
		if len(b) != (ids+63)/64 {
			t.Fatalf("%s: candidates of %d words for %d ids", what, len(b), ids)
		}
		if !slices.Equal(got, s.want[tri]) {
			t.Fatalf("%s: trigram %#x: ids %v, want %v", what, tri, got, s.want[tri])
		}
	}
}

// writeIndex writes s to a file in dir through a Writer that writes a segment whenever
// budget bytes are held, adding postings to lists every batch pairs.
func writeIndex(t *testing.T, dir string, s postingSet, budget int64, batch int) (*Index, string) {
	t.Helper()
	path := filepath.Join(dir, "x.tri")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWriter(f, budget)
	w.batch = batch
	for i, id := range s.ids {
		if err := w.Add(id, s.tris[i]); err != nil {
			t.Fatal(err)
		}
	}
	x, err := w.Finish([]byte("extra bytes"))
	if err != nil {
		t.Fatal(err)
	}
	return x, path
}

func TestPostingsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name   string
		n      int
		dense  float64
		budget int64
		batch  int
		merge  int // mergeLimit
		segs   int // segments written
	}{
		{"empty", 0, 0, 1 << 20, batch, mergeLimit, 0},
		{"one file", 1, 0.5, 1 << 20, batch, mergeLimit, 1},
		{"sparse, one segment", 500, 0.02, 1 << 30, batch, mergeLimit, 1},
		{"dense, one segment", 500, 0.9, 1 << 30, batch, mergeLimit, 1},
		{"mixed, a segment per file", 70, 0.3, 1, 1, 0, 70},
		{"mixed, a segment per file, merged", 70, 0.3, 1, 1, mergeLimit, 1},
		{"dense, many segments merged", 3000, 0.6, 4 << 10, 7, mergeLimit, 1},
		{"sparse, many segments merged", 3000, 0.05, 4 << 10, 64, mergeLimit, 1},
		{"sparse, many segments merged in groups", 3000, 0.05, 4 << 10, 64, 8 << 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(m int) { mergeLimit = m }(mergeLimit)
			mergeLimit = tc.merge
			s := randomPostings(rng, 0, tc.n, tc.dense)
			mem := New()
			for i, id := range s.ids {
				mem.Add(id, s.tris[i])
			}
			s.check(t, mem, "in memory")
			x, path := writeIndex(t, t.TempDir(), s, tc.budget, tc.batch)
			s.check(t, x, "written")
			if tc.segs > 0 && len(x.segs) != tc.segs || tc.segs == 0 && tc.n > 0 && (len(x.segs) < 2 || len(x.segs) > 8) {
				t.Fatalf("%d segments, want %d", len(x.segs), tc.segs)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			y, extra, err := Open(f)
			f.Close()
			if err != nil || string(extra) != "extra bytes" {
				t.Fatalf("Open = %q, %v", extra, err)
			}
			s.check(t, y, "reopened")
			// Added to in memory after its segments, as an index of changed files is.
			more := randomPostings(rng, uint32(y.IDs()), 50, tc.dense)
			for i, id := range more.ids {
				y.Add(id, more.tris[i])
			}
			all := postingSet{ids: append(slices.Clone(s.ids), more.ids...), want: map[Trigram][]uint32{}}
			for _, p := range []postingSet{s, more} {
				for tri, ids := range p.want {
					all.want[tri] = append(all.want[tri], ids...)
				}
			}
			all.check(t, y, "reopened and added to")
		})
	}
}

// TestPostingsSegmentBoundary: bitmap lists of segments that start and end within a word
// of the candidate set set only their own ids.
func TestPostingsSegmentBoundary(t *testing.T) {
	defer func(m int) { mergeLimit = m }(mergeLimit)
	mergeLimit = 0 // each segment flushed stays one
	for _, size := range []int{1, 7, 63, 64, 65, 100} {
		s := postingSet{want: map[Trigram][]uint32{}}
		for id := range uint32(300) {
			tris := []Trigram{1} // in every file: a bitmap in every segment
			if id%3 == 0 {
				tris = append(tris, 2)
			}
			s.ids = append(s.ids, id)
			s.tris = append(s.tris, tris)
			for _, tri := range tris {
				s.want[tri] = append(s.want[tri], id)
			}
		}
		path := filepath.Join(t.TempDir(), "x.tri")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f, 1<<30)
		for i, id := range s.ids {
			w.Add(id, s.tris[i])
			if (i+1)%size == 0 {
				w.flush() // a segment of size files
			}
		}
		x, err := w.Finish(nil)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(x.segs) != (300+size-1)/size {
			t.Fatalf("%d segments of %d files", len(x.segs), size)
		}
		s.check(t, x, "segments of "+strings.Repeat("*", size))
	}
}

// TestOpenRejects: a file cut short, of another format, or with its tables or footer
// changed is not read; a change to posting bytes, which the checksum does not cover,
// gives wrong candidates at worst, never a crash.
func TestOpenRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := randomPostings(rng, 0, 400, 0.3)
	dir := t.TempDir()
	_, path := writeIndex(t, dir, s, 2<<10, 16)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	open := func(data []byte) (*Index, error) {
		p := filepath.Join(dir, "bad.tri")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		x, _, err := Open(f)
		return x, err
	}
	for _, n := range []int{0, 10, headerLen + footerLen - 1, len(good) / 2, len(good) - 1} {
		if _, err := open(good[:n]); !errors.Is(err, ErrFormat) {
			t.Errorf("cut to %d bytes: %v, want ErrFormat", n, err)
		}
	}
	old := slices.Clone(good)
	binary.LittleEndian.PutUint32(old[4:], Format-1)
	if _, err := open(old); !errors.Is(err, ErrFormat) {
		t.Errorf("format %d: %v, want ErrFormat", Format-1, err)
	}
	if _, err := open([]byte(strings.Repeat("\x0e\xff\x81\x03\x01\x01\x0asavedIndex", 20))); !errors.Is(err, ErrFormat) {
		t.Errorf("a gob: %v, want ErrFormat", err)
	}
	seg := segHeader + headerLen
	for _, at := range []int{0, 8, headerLen + 2, seg + 1, seg + 5, len(good) - 20, len(good) - 1} {
		bad := slices.Clone(good)
		bad[at] ^= 0x40
		if _, err := open(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("byte %d changed: %v, want ErrFormat", at, err)
		}
	}
	for range 300 {
		bad := slices.Clone(good)
		for range 1 + rng.IntN(4) {
			bad[rng.IntN(len(bad))] = byte(rng.Uint32())
		}
		x, err := open(bad)
		if err != nil {
			continue
		}
		for tri := range Trigram(20) {
			b := x.Candidates(&Query{Op: Or, Tri: []Trigram{tri, tri + 100}})
			if len(b) != (x.IDs()+63)/64 {
				t.Fatalf("candidates of %d words for %d ids", len(b), x.IDs())
			}
		}
	}
}

// TestDistinct: Seen finds each trigram once, in the order of first occurrence, with no
// limit on how many, and is empty again afterwards.
func TestDistinct(t *testing.T) {
	var s Seen
	data := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for range 2 {
		got, ok := s.Distinct(data, nil, 0)
		want := map[Trigram]bool{}
		var order []Trigram
		for i := 0; i+3 <= len(data); i++ {
			tri := Trigram(data[i])<<16 | Trigram(data[i+1])<<8 | Trigram(data[i+2])
			if !want[tri] {
				want[tri] = true
				order = append(order, tri)
			}
		}
		if !ok || len(got) <= 1<<16 || !slices.Equal(got, order) {
			t.Fatalf("Distinct: %d trigrams, %v; want the %d in order", len(got), ok, len(order))
		}
		if slices.ContainsFunc(s.bits[:], func(w uint64) bool { return w != 0 }) {
			t.Fatal("Seen not empty after Distinct")
		}
	}
	if _, ok := s.Distinct(data, nil, 1000); ok {
		t.Fatal("Distinct over its limit said ok")
	}
}

// TestOrDeltasAgreesWithDecode: the byte-at-a-time decoder a search's plan uses sets
// exactly the ids the plain decoder gives, below its limit, for lists of small, middling
// and large gaps, with and without the last half byte of padding, in memory (no padding
// counted) and as written.
func TestOrDeltasAgreesWithDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 3000 {
		base := uint32(rng.IntN(5000))
		var p plist
		var ids []uint32
		id := base + uint32(rng.IntN(3)*rng.IntN(100))
		maxGap := []int{1, 8, 64, 600, 70000}[rng.IntN(5)]
		for range rng.IntN(300) {
			ids = append(ids, id)
			p.add(id, base)
			id += 1 + uint32(rng.IntN(maxGap))
			if rng.IntN(10) == 0 {
				id += uint32(rng.IntN(9)) // a gap of a different size now and then
			}
		}
		n := base + 1
		if len(ids) > 0 {
			n = ids[len(ids)-1] + 1
		}
		limit := n
		if trial%3 == 0 {
			limit = base + uint32(rng.IntN(int(n-base)+1))
		}
		want := make(Bits, (n+63)/64)
		for _, id := range ids {
			if id < limit {
				want.set(id)
			}
		}
		// As in memory: the free high half not counted.
		nibbles := 2*len(p.buf) - b2i(p.half)
		got := make(Bits, len(want))
		orDeltas(got, p.buf, nibbles, base, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (gaps up to %d, %d ids from %d, limit %d): in memory, got %v, want %v", trial, maxGap, len(ids), base, limit, got, want)
		}
		// As written: a free high half is 0x8, a group that never ends.
		buf := slices.Clone(p.buf)
		if p.half {
			buf[len(buf)-1] |= 0x80
		}
		got = make(Bits, len(want))
		orDeltas(got, buf, 2*len(buf), base, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: as written, got %v, want %v", trial, got, want)
		}
		// The plain decoder agrees, and a shorter set is not written past.
		var dec []uint32
		decodeDeltas(buf, 2*len(buf), base, func(id uint32) { dec = append(dec, id) })
		if !slices.Equal(dec, ids) {
			t.Fatalf("trial %d: decodeDeltas gives %v, want %v", trial, dec, ids)
		}
		short := make(Bits, len(want)/2)
		orDeltas(short, buf, 2*len(buf), base, n)
	}
}

// TestCandidatesOfNestedQueries: for random ANDs and ORs of trigrams, nested, with parts
// that hold every file or none, an index written in several segments and added to in
// memory gives exactly the files the query asks for, not merely a superset, however
// the sets it computes are reused.
func TestCandidatesOfNestedQueries(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	s := randomPostings(rng, 0, 2000, 0.3)
	x, _ := writeIndex(t, t.TempDir(), s, 4<<10, 64)
	more := randomPostings(rng, uint32(x.IDs()), 300, 0.3)
	for i, id := range more.ids {
		x.Add(id, more.tris[i])
	}
	for tri, ids := range more.want {
		s.want[tri] = append(s.want[tri], ids...)
	}
	n := x.IDs()
	var tris []Trigram
	for tri := range s.want {
		tris = append(tris, tri)
	}
	slices.Sort(tris)
	tris = append(tris, 5000) // absent
	type set = map[uint32]bool
	var gen func(depth int) (*Query, set)
	gen = func(depth int) (*Query, set) {
		switch r := rng.IntN(10); {
		case r == 0:
			all := set{}
			for id := range uint32(n) {
				all[id] = true
			}
			return &Query{Op: All}, all
		case r == 1:
			return &Query{Op: None}, set{}
		}
		q := &Query{Op: []Op{And, Or}[rng.IntN(2)]}
		var parts []set
		for range rng.IntN(4) {
			tri := tris[rng.IntN(len(tris))]
			q.Tri = append(q.Tri, tri)
			p := set{}
			for _, id := range s.want[tri] {
				p[id] = true
			}
			parts = append(parts, p)
		}
		if depth < 3 {
			for range rng.IntN(3) {
				sub, p := gen(depth + 1)
				q.Sub = append(q.Sub, sub)
				parts = append(parts, p)
			}
		}
		want := set{}
		if q.Op == Or {
			for _, p := range parts {
				for id := range p {
					want[id] = true
				}
			}
			return q, want
		}
		for id := range uint32(n) {
			in := true
			for _, p := range parts {
				in = in && p[id]
			}
			if in {
				want[id] = true
			}
		}
		return q, want
	}
	for trial := range 400 {
		q, want := gen(0)
		got := x.Candidates(q)
		if q.Op == All {
			if got != nil {
				t.Fatalf("trial %d: %v gives a set, want nil (every file)", trial, q)
			}
			continue
		}
		for id := range uint32(n) {
			if got.Has(id) != want[id] {
				t.Fatalf("trial %d: %v: id %d in the candidates %v, want %v", trial, q, id, got.Has(id), want[id])
			}
		}
	}
}
