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

// Store keeps contents by their SHA-256 digest, each once, in files named by the digest.
// A content is written to a file that has no name yet (O_TMPFILE) and linked into place
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

	temps atomic.Int64 // numbers temporary files: one process writes a store at a time
	named atomic.Bool  // unnamed files cannot be had: contents are written to a temporary name
}

// OpenStore opens (making it, mode 0700) the store in dir, removes what a killed writer
// left, and counts its size. max bounds the bytes it keeps (0: no limit).
func OpenStore(dir string, max int64) (*Store, error) {
	s := &Store{dir: dir, max: max, shards: map[string]bool{}}
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

// Has reports whether the content with this digest is kept.
func (s *Store) Has(digest string) bool {
	_, err := os.Lstat(s.path(digest))
	return err == nil
}

// Put keeps data and returns its digest. A content already kept costs a stat.
func (s *Store) Put(data []byte) (string, error) {
	d := Digest(data)
	if s.Has(d) {
		return d, nil
	}
	s.mu.Lock()
	if s.max > 0 && s.size+int64(len(data)) > s.max {
		s.mu.Unlock()
		return "", ErrStoreFull
	}
	s.size += int64(len(data))
	s.mu.Unlock()
	if err := s.write(d, data); err != nil {
		s.mu.Lock()
		s.size -= int64(len(data))
		s.mu.Unlock()
		return "", err
	}
	return d, nil
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

// Get returns the content with this digest.
func (s *Store) Get(digest string) ([]byte, error) {
	if len(digest) != 64 {
		return nil, fmt.Errorf("bad digest %q", digest)
	}
	data, err := readFile(s.path(digest))
	if err != nil {
		return nil, fmt.Errorf("content %.12s is not in the store: %w", digest, err)
	}
	if Digest(data) != digest {
		return nil, fmt.Errorf("content %.12s in the store is damaged", digest)
	}
	return data, nil
}
