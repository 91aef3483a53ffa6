//go:build !linux

package search

import (
	"errors"
	"io"
	"os"
	"time"
)

// readFile reads the regular file open as fd (opened without blocking) into *buf (grown as
// needed). It checks the type before reading, so a FIFO cannot hang it, and closes fd.
func readFile(fd int, buf *[]byte, maxSize int64) ([]byte, time.Time, error) {
	f := os.NewFile(uintptr(fd), "file")
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if !info.Mode().IsRegular() {
		return nil, time.Time{}, errNotRegular
	}
	if maxSize > 0 && info.Size() > maxSize {
		return nil, time.Time{}, errTooLarge
	}
	size := int(info.Size())
	if cap(*buf) < size {
		*buf = make([]byte, size+size/8+512)
	}
	n, err := io.ReadFull(f, (*buf)[:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, time.Time{}, err
	}
	return (*buf)[:n], info.ModTime(), nil
}

// readKnown reads the file open as fd, which the index holds as it is; see readFile.
func readKnown(fd int, buf *[]byte, _, _, maxSize int64) ([]byte, time.Time, error) {
	return readFile(fd, buf, maxSize)
}
