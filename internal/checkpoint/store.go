package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// ErrStoreFull is returned by [Store.Put] when keeping a content would take the store
// past its size limit.
var ErrStoreFull = errors.New("checkpoint store full")

// Store keeps contents by their SHA-256 digest, each once: in files named by the digest
// (loose), or in the packs of the journal, each of which holds one call's record and the
// contents it was first to keep ([batch]); an index in memory, rebuilt at start from the
// packs, says where in which pack a packed content is. A content is written to a file that has no name yet (O_TMPFILE) and linked into place
// once whole, or, where that cannot be had, to a temporary file renamed into place: a
// reader (or a Boris killed half-way) never sees part of one. Contents are not synced to disk one by
// one: they survive the process being killed, and a journal record that names them is
// synced; after a power loss a content may be missing, which [Store.Get] reports (a
// content that does not match its digest is never returned).
type Store struct {
	dir string
	max int64 // bytes; 0: no limit

	mu     sync.Mutex
	size   int64           // bytes of the contents kept
	shards map[string]bool // the subdirectories known to exist
	packs  []string        // the packs' paths
	index  map[string]loc  // where each packed content is
	// loose names the contents kept as files of their own: listed at open and kept up to
	// date by this process, the only one that writes the store (the tracker's lock), so
	// that knowing whether a content is kept costs no system call.
	loose map[[32]byte]struct{}

	temps atomic.Int64 // numbers temporary files: one process writes a store at a time
	named atomic.Bool  // unnamed files cannot be had: contents are written to a temporary name
}

// OpenStore opens (making it, mode 0700) the store in dir, removes what a killed writer
// left, and counts its size. max bounds the bytes it keeps (0: no limit).
func OpenStore(dir string, max int64) (*Store, error) {
	s := &Store{dir: dir, max: max, shards: map[string]bool{}, index: map[string]loc{}, loose: map[[32]byte]struct{}{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(d.Name(), tempMark) {
			return os.Remove(p) // a content a killed writer did not finish
		}
		if info, err := d.Info(); err == nil {
			s.size += info.Size()
		}
		if k, ok := key(filepath.Base(filepath.Dir(p)) + d.Name()); ok {
			s.loose[k] = struct{}{}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Digest returns the name data is kept under.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (s *Store) path(digest string) string {
	return filepath.Join(s.dir, digest[:2], digest[2:])
}

// Size returns the bytes the store holds.
func (s *Store) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// loc is where a packed content is: which pack, at which offset, how long.
type loc struct {
	pack   int
	off, n int64
}

// key is the digest d as bytes.
func key(d string) (k [32]byte, ok bool) {
	if len(d) != 64 {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(d))
	return k, err == nil
}

// Has reports whether the content with this digest is kept.
func (s *Store) Has(digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has(digest)
}

// has is Has with s.mu held.
func (s *Store) has(digest string) bool {
	if _, ok := s.index[digest]; ok {
		return true
	}
	k, _ := key(digest)
	_, ok := s.loose[k]
	return ok
}

// Put keeps data and returns its digest. A content already kept costs a stat.
func (s *Store) Put(data []byte) (string, error) {
	return s.put(data, nil)
}

// put keeps data, in b if b is not nil and it fits there, else as a file of its own. A
// content already kept, loose, packed or in b, is not kept again.
func (s *Store) put(data []byte, b *batch) (string, error) {
	d := Digest(data)
	s.mu.Lock()
	if s.has(d) || b != nil && b.has[d] {
		s.mu.Unlock()
		return d, nil
	}
	if s.max > 0 && s.size+int64(len(data)) > s.max {
		s.mu.Unlock()
		return "", ErrStoreFull
	}
	s.size += int64(len(data))
	if b != nil && len(data) <= packMaxContent && b.bytes+int64(len(data)) <= packMax {
		if b.has == nil {
			b.has = map[string]bool{}
		}
		b.has[d] = true
		b.digests = append(b.digests, d)
		b.data = append(b.data, data)
		b.bytes += int64(len(data))
		s.mu.Unlock()
		return d, nil
	}
	k, _ := key(d)
	s.loose[k] = struct{}{}
	s.mu.Unlock()
	if err := s.writeLoose(d, data); err != nil {
		return "", err
	}
	return d, nil
}

// writeLoose writes the content d as a file of its own. The store counts its size and
// knows it as kept already (so that a content read by two readers at once is written
// once); if the write fails, it is not kept after all.
func (s *Store) writeLoose(d string, data []byte) error {
	k, _ := key(d)
	err := s.write(d, data)
	if err != nil {
		s.mu.Lock()
		delete(s.loose, k)
		s.size -= int64(len(data))
		s.mu.Unlock()
	}
	return err
}

// tempMark is in the name of a content being written, beside where it will be: spread
// over the subdirectories, writers do not all wait on the lock of one directory.
const tempMark = ".tmp"

func (s *Store) write(d string, data []byte) error {
	shard := filepath.Join(s.dir, d[:2])
	s.mu.Lock()
	known := s.shards[d[:2]]
	s.mu.Unlock()
	if !known {
		if err := os.MkdirAll(shard, 0o700); err != nil {
			return fmt.Errorf("keeping a content: %w", err)
		}
		s.mu.Lock()
		s.shards[d[:2]] = true
		s.mu.Unlock()
	}
	if !s.named.Load() {
		ok, err := writeUnnamed(shard, s.path(d), data, 0, "store-before-rename")
		if ok {
			if err != nil && !errors.Is(err, fs.ErrExist) { // one that exists is whole
				return fmt.Errorf("keeping a content: %w", err)
			}
			return nil
		}
		s.named.Store(true)
	}
	name := filepath.Join(shard, d[2:]+tempMark+strconv.FormatInt(s.temps.Add(1), 10))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("keeping a content: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = crashPoint("store-before-rename")
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path(d))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("keeping a content: %w", err)
	}
	return nil
}

// addPack records where the contents of the pack at path are. counted says the store's
// size holds them already (they were put in a batch).
func (s *Store) addPack(path string, contents []packed, counted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.packs = append(s.packs, path)
	for _, c := range contents {
		if _, ok := s.index[c.digest]; ok {
			continue
		}
		s.index[c.digest] = loc{pack: len(s.packs) - 1, off: c.off, n: c.n}
		if !counted {
			s.size += c.n
		}
	}
}

// unstage writes b's contents as files of their own: for when they are not packed after
// all (no record to pack them with, or the pack could not be written).
func (s *Store) unstage(b *batch) error {
	if b == nil {
		return nil
	}
	var first error
	s.mu.Lock()
	for _, d := range b.digests {
		k, _ := key(d)
		s.loose[k] = struct{}{}
	}
	s.mu.Unlock()
	for i, d := range b.digests {
		if err := s.writeLoose(d, b.data[i]); err != nil {
			if first == nil {
				first = err
			}
		}
	}
	*b = batch{}
	return first
}

// Get returns the content with this digest.
func (s *Store) Get(digest string) ([]byte, error) {
	if len(digest) != 64 {
		return nil, fmt.Errorf("bad digest %q", digest)
	}
	s.mu.Lock()
	l, packed := s.index[digest]
	var pack string
	if packed {
		pack = s.packs[l.pack]
	}
	s.mu.Unlock()
	var data []byte
	var err error
	if packed {
		data, err = readAt(pack, l.off, l.n)
	} else {
		data, err = readFile(s.path(digest))
	}
	if err != nil {
		return nil, fmt.Errorf("content %.12s is not in the store: %w", digest, err)
	}
	if Digest(data) != digest {
		return nil, fmt.Errorf("content %.12s in the store is damaged", digest)
	}
	return data, nil
}

// readAt reads n bytes at off in the file at path.
func readAt(path string, off, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, n)
	if _, err := f.ReadAt(data, off); err != nil {
		return nil, err
	}
	return data, nil
}
