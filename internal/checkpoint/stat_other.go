//go:build !linux

package checkpoint

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// readDir calls fn with the name of each entry of the directory abs and what lstat says
// of it; name is valid only during the call. Here no directory is given as a descriptor
// (fd and sub are always -1), and every directory is read: no listing is kept.
func readDir(_ int, abs string, _ meta, _ []byte, _ *listing, _ listings, _ func(name []byte) bool, fn func(name []byte, m meta, sub int, p *node) *node) (*listing, error) {
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if info, err := os.Lstat(filepath.Join(abs, e.Name())); err == nil {
			fn([]byte(e.Name()), metaOf(info), -1, nil)
		}
	}
	return nil, nil
}

// listingsOf says no listing is kept here.
func listingsOf(string, time.Duration) listings { return listings{} }

// closeDir closes a descriptor readDir gave: none here.
func closeDir(int) {}

// metaOf is what info (from os.Lstat) says that the baseline keeps: here no inode and no
// change time.
func metaOf(info fs.FileInfo) meta {
	return meta{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
}

// openRead opens the file at name for reading.
func openRead(name string) (io.ReadCloser, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// readFile is os.ReadFile.
func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
