//go:build !linux

package search

import (
	"errors"
	"io"
	"time"
)

// readFile reads the regular file name into *buf (grown as needed). It opens without
// blocking and checks the type before reading, so a FIFO cannot hang it.
func readFile(name string, buf *[]byte, maxSize int64) ([]byte, time.Time, error) {
	f, err := openNoBlock(name)
	if err != nil {
		return nil, time.Time{}, err
	}
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
