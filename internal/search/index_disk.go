package search

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// indexFormat changes whenever what is saved or how trigrams are made changes.
const indexFormat = 1

// savedIndex is an index as kept in the cache directory.
type savedIndex struct {
	Format int
	Root   string
	Paths  []string
	Files  []savedFile
	Lists  map[trigram.Trigram][]uint32
	IDs    int
}

type savedFile struct {
	ID                 uint32
	Size, Mtime, Ctime int64
	Ino                uint64
	Binary             bool
}

// indexPath is where the index of root is kept under dir.
func indexPath(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "search", hex.EncodeToString(sum[:12])+".idx")
}

// Save writes x under dir (a cache directory) atomically, where [Indexes] with that Dir
// find it.
func (x *Index) Save(dir string) error {
	path := indexPath(dir, x.root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	s := savedIndex{Format: indexFormat, Root: x.root}
	for p, f := range x.files {
		s.Paths = append(s.Paths, p)
		s.Files = append(s.Files, savedFile{f.id, f.size, f.mtime, f.ctime, f.ino, f.binary})
	}
	s.Lists, s.IDs = x.tri.Lists()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".idx-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := gob.NewEncoder(w).Encode(&s); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// loadIndex reads the index of root kept under dir. It need not be fresh: a search checks
// each file it rules out against what the index recorded.
func loadIndex(dir, root string) (*Index, error) {
	f, err := os.Open(indexPath(dir, root))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var s savedIndex
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&s); err != nil {
		return nil, err
	}
	if s.Format != indexFormat || s.Root != root || len(s.Paths) != len(s.Files) {
		return nil, fmt.Errorf("index of %s: not of this format or root", root)
	}
	x := &Index{root: root, files: make(map[string]indexedFile, len(s.Paths)), tri: trigram.FromLists(s.Lists, s.IDs)}
	for i, p := range s.Paths {
		sf := s.Files[i]
		if int(sf.ID) >= s.IDs {
			return nil, fmt.Errorf("index of %s: file id out of range", root)
		}
		x.files[p] = indexedFile{sf.ID, sf.Size, sf.Mtime, sf.Ctime, sf.Ino, sf.Binary}
	}
	return x, nil
}
