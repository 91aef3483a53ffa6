package search

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// An index is kept in one file (see trigram.Writer): its posting segments, then, as the
// file's extra bytes, the file table's format (tableFormat), the root and the file
// table: how many files, the length of all their paths together, then for each file in
// the order of its ids the length of the path's prefix shared with the one before and the
// rest of the path, size, mtime, ctime (varints), inode (uvarint), whether the file is
// binary (a byte), and how many blocks (ids) it has (uvarint), then for each block after
// the first how far its start is from the one before's, in bytes and in lines (uvarints).
// A table of another format is not read: its index is built again.

// tableFormat starts the file table: a 0 byte (the first byte of a table before blocks
// was the root's length, never 0) and the format.
var tableFormat = []byte{0, 'B', 'L', 'K', 1}

// indexPath is where the index of root is kept under dir; oldIndexPath where a gob of
// an earlier format was.
func indexPath(dir, root string) string {
	return filepath.Join(dir, "search", rootKey(root)+".tri")
}

func oldIndexPath(dir, root string) string {
	return filepath.Join(dir, "search", rootKey(root)+".idx")
}

func rootKey(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:12])
}

// indexFile is where a build writes: a temporary file in the cache directory's search/
// (renamed into place by Save), or, without a cache directory, an unlinked file in the
// system's temporary directory.
func indexFile(dir string) (f *os.File, tmp string, err error) {
	if dir == "" {
		f, err := os.CreateTemp("", "boris-index-*")
		if err != nil {
			return nil, "", err
		}
		os.Remove(f.Name())
		return f, "", nil
	}
	d := filepath.Join(dir, "search")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, "", err
	}
	f, err = os.CreateTemp(d, ".tri-*")
	if err != nil {
		return nil, "", err
	}
	return f, f.Name(), nil
}

// encodeFiles returns the file table of x, paths by id.
func encodeFiles(root string, paths []string, files map[string]indexedFile) []byte {
	out := append([]byte(nil), tableFormat...)
	out = binary.AppendUvarint(out, uint64(len(root)))
	out = append(out, root...)
	out = binary.AppendUvarint(out, uint64(len(paths)))
	total := 0
	for _, p := range paths {
		total += len(p)
	}
	out = binary.AppendUvarint(out, uint64(total))
	prev := ""
	for _, p := range paths {
		f := files[p]
		n := 0
		for n < len(p) && n < len(prev) && p[n] == prev[n] {
			n++
		}
		out = binary.AppendUvarint(out, uint64(n))
		out = binary.AppendUvarint(out, uint64(len(p)-n))
		out = append(out, p[n:]...)
		out = binary.AppendVarint(out, f.size)
		out = binary.AppendVarint(out, f.mtime)
		out = binary.AppendVarint(out, f.ctime)
		out = binary.AppendUvarint(out, f.ino)
		b := byte(0)
		if f.binary {
			b = 1
		}
		out = append(out, b)
		out = binary.AppendUvarint(out, uint64(f.blocks()))
		if t := f.blk; t != nil {
			for i := 1; i < len(t.off); i++ {
				out = binary.AppendUvarint(out, uint64(t.off[i]-t.off[i-1]))
				out = binary.AppendUvarint(out, uint64(t.line[i]-t.line[i-1]))
			}
		}
		prev = p
	}
	return out
}

var (
	errCorrupt  = errors.New("corrupt file table")
	errOldTable = errors.New("file table of an older format")
)

// decodeFiles reads a file table of encodeFiles; its paths share one string.
func decodeFiles(b []byte, ids int) (root string, files map[string]indexedFile, err error) {
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			err = errCorrupt
			return 0
		}
		b = b[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			err = errCorrupt
			return 0
		}
		b = b[n:]
		return v
	}
	bytesOf := func(n uint64) []byte {
		if n > uint64(len(b)) {
			err = errCorrupt
			return nil
		}
		s := b[:n]
		b = b[n:]
		return s
	}
	if !bytes.HasPrefix(b, tableFormat) {
		return "", nil, errOldTable
	}
	b = b[len(tableFormat):]
	root = string(bytesOf(uv()))
	count, total := uv(), uv()
	if err != nil || count > uint64(ids) || count > uint64(len(b)) || total > 1<<31 || total > count<<12 {
		return "", nil, errCorrupt
	}
	files = make(map[string]indexedFile, count)
	all := make([]byte, 0, total)
	ends := make([]int, 0, count)
	meta := make([]indexedFile, 0, count)
	start := 0
	next := uint64(0) // the next id
	for range count {
		shared := uv()
		if err != nil || shared > uint64(len(all)-start) {
			return "", nil, errCorrupt
		}
		all = append(all, all[start:start+int(shared)]...)
		start = len(all) - int(shared)
		all = append(all, bytesOf(uv())...)
		f := indexedFile{id: uint32(next), size: sv(), mtime: sv(), ctime: sv(), ino: uv()}
		bin := bytesOf(1)
		blocks := uv()
		if err != nil || blocks == 0 || blocks > uint64(ids)-next || blocks > 1 && blocks > uint64(len(b)) {
			return "", nil, errCorrupt
		}
		f.binary = bin[0] == 1
		next += blocks
		if blocks > 1 {
			t := &blockTable{off: make([]uint32, blocks), line: make([]uint32, blocks)}
			t.line[0] = 1
			for k := 1; k < int(blocks); k++ {
				o, l := uv(), uv()
				t.off[k], t.line[k] = t.off[k-1]+uint32(o), t.line[k-1]+uint32(l)
				if err != nil || o == 0 || int64(t.off[k]) >= f.size || uint64(t.off[k]) < o {
					return "", nil, errCorrupt
				}
			}
			f.blk = t
		}
		ends = append(ends, len(all))
		meta = append(meta, f)
	}
	if len(all) != int(total) || next != uint64(ids) {
		return "", nil, errCorrupt
	}
	s := string(all) // one string for every path
	prev := 0
	for i, e := range ends {
		files[s[prev:e]] = meta[i]
		prev = e
	}
	if len(files) != len(ends) {
		return "", nil, errCorrupt
	}
	return root, files, nil
}

// Save keeps x under dir (a cache directory), where [Indexes] with that Dir find it: the
// file it was built in is renamed into place, or a copy is written and renamed.
func (x *Index) Save(dir string) error {
	if x.tri.MappedBytes() == 0 {
		return errors.New("index has no file")
	}
	path := indexPath(dir, x.root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	os.Remove(oldIndexPath(dir, x.root))
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	if x.tmp != "" && filepath.Dir(x.tmp) == filepath.Dir(path) {
		if err := os.Rename(x.tmp, path); err != nil {
			return err
		}
		x.tmp = ""
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tri-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(x.tri.Bytes())
	runtime.KeepAlive(x.tri)
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// loadIndex reads the index of root kept under dir. It need not be fresh: a search checks
// each file it rules out against what the index recorded. A file that is not a whole
// index of this format is removed, so the index is built again.
func loadIndex(dir, root string) (*Index, error) {
	os.Remove(oldIndexPath(dir, root))
	removeStale(filepath.Join(dir, "search"))
	path := indexPath(dir, root)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tri, extra, err := trigram.Open(f)
	if err == nil {
		var got string
		var files map[string]indexedFile
		got, files, err = decodeFiles(extra, tri.IDs())
		if err == nil && got != root {
			err = errors.New("not this root's")
		}
		if err == nil {
			return &Index{root: root, files: files, tri: tri}, nil
		}
	}
	os.Remove(path)
	return nil, fmt.Errorf("index of %s: %w", root, err)
}

// removeStale removes the temporary files of builds that did not finish (their process
// ended) a day or more ago.
func removeStale(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".tri-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
