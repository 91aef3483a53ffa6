package checkpoint

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// A pack is one call's checkpoint record and the contents that call was first to keep, in
// one file of the journal (0000000007.pack): one new file a call, however many files it
// changed. It is written unnamed and linked into place once whole, like a record, so a
// kill leaves it whole or absent. Its layout:
//
//	packMagic                       8 bytes
//	record length, content count   2 × uint32, little-endian
//	count × (SHA-256, length)       32 bytes and a uint64 each
//	the record                      JSON, as a .json record holds it
//	the contents                    one after the other, in the order of the index
//	packEnd                         8 bytes
//
// A file whose size is not what its header says, or that does not end in packEnd, is torn
// (after a power loss: packs are not synced) and is set aside at the next start.
const (
	packMagic = "BCPK0001"
	packEnd   = "BCPKEND\n"
	packHead  = len(packMagic) + 8
	packEntry = 32 + 8
)

// Contents are packed only while a call's pack stays small: a larger content, or one past
// packMax bytes of a call's contents, is kept as a file of its own, as the baseline's are.
const (
	packMaxContent = 1 << 20
	packMax        = 8 << 20
)

// batch holds the new contents a capture read, until its record is written with them.
type batch struct {
	digests []string
	data    [][]byte
	bytes   int64
	has     map[string]bool
}

// encodePack returns the pack of record c and the contents of b, and where in it each
// content starts.
func encodePack(c *Checkpoint, b *batch) ([]byte, []int64, error) {
	rec, err := json.Marshal(c)
	if err != nil {
		return nil, nil, err
	}
	n := 0
	if b != nil {
		n = len(b.digests)
	}
	size := packHead + n*packEntry + len(rec) + len(packEnd)
	if b != nil {
		size += int(b.bytes)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, packMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rec)))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(n))
	for i := range n {
		sum, err := hex.DecodeString(b.digests[i])
		if err != nil || len(sum) != 32 {
			return nil, nil, fmt.Errorf("bad digest %q", b.digests[i])
		}
		buf = append(buf, sum...)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(b.data[i])))
	}
	buf = append(buf, rec...)
	offs := make([]int64, n)
	for i := range n {
		offs[i] = int64(len(buf))
		buf = append(buf, b.data[i]...)
	}
	buf = append(buf, packEnd...)
	return buf, offs, nil
}

// packed is where a content is in a pack.
type packed struct {
	digest string
	off, n int64
}

// errTorn says a pack is not whole.
var errTorn = errors.New("torn pack")

// readPack reads the record of the pack at path and where its contents are; errTorn if
// it is not whole.
func readPack(path string) (*Checkpoint, []packed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := info.Size()
	head := make([]byte, packHead)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, nil, tornOr(err)
	}
	if string(head[:len(packMagic)]) != packMagic {
		return nil, nil, errTorn
	}
	recLen := int64(binary.LittleEndian.Uint32(head[8:]))
	count := int64(binary.LittleEndian.Uint32(head[12:]))
	if int64(packHead)+count*packEntry+recLen+int64(len(packEnd)) > size {
		return nil, nil, errTorn
	}
	rest := make([]byte, count*packEntry+recLen)
	if _, err := f.ReadAt(rest, int64(packHead)); err != nil {
		return nil, nil, tornOr(err)
	}
	off := int64(packHead) + int64(len(rest))
	var out []packed
	for i := range count {
		e := rest[i*packEntry:]
		n := int64(binary.LittleEndian.Uint64(e[32:]))
		out = append(out, packed{digest: hex.EncodeToString(e[:32]), off: off, n: n})
		off += n
	}
	end := make([]byte, len(packEnd))
	if off+int64(len(packEnd)) != size {
		return nil, nil, errTorn
	}
	if _, err := f.ReadAt(end, off); err != nil {
		return nil, nil, tornOr(err)
	}
	if string(end) != packEnd {
		return nil, nil, errTorn
	}
	var c Checkpoint
	if err := json.Unmarshal(rest[count*packEntry:], &c); err != nil {
		return nil, nil, errTorn
	}
	return &c, out, nil
}

func tornOr(err error) error {
	if errors.Is(err, io.EOF) {
		return errTorn
	}
	return err
}
