//go:build !linux

package checkpoint

import "io/fs"

// writeUnnamed is Linux's O_TMPFILE; elsewhere contents are written to a temporary name.
func writeUnnamed(dir, name string, data []byte, perm fs.FileMode, point string) (ok bool, err error) {
	return false, nil
}

// spareFile is an unnamed file kept open ahead of the next write: Linux only.
type spareFile struct{}

func newSpareFile(dir string) *spareFile { return nil }

func (s *spareFile) write(name string, data []byte, point string) (bool, error) {
	return false, nil
}

func (s *spareFile) close() {}
