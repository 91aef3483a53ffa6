package search

import (
	"syscall"
	"time"
)

// readFile reads the regular file open as fd (opened with O_NONBLOCK, so that a FIFO
// swapped in after the directory listing cannot block) into *buf (grown as needed) with
// plain system calls: no poller registration, no allocation. It checks the type before
// reading, and closes fd.
func readFile(fd int, buf *[]byte, maxSize int64) ([]byte, time.Time, error) {
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, time.Time{}, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, time.Time{}, errNotRegular
	}
	if maxSize > 0 && st.Size > maxSize {
		return nil, time.Time{}, errTooLarge
	}
	size := int(st.Size)
	if cap(*buf) < size {
		*buf = make([]byte, size+size/8+512)
	}
	b := (*buf)[:size]
	n := 0
	for n < size {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, time.Time{}, err
		}
		if m == 0 {
			break // the file shrank
		}
		n += m
	}
	return b[:n], time.Unix(st.Mtim.Unix()), nil
}

// readKnown reads the file open as fd, which the index holds as it is (a regular file of
// size bytes modified at mtime), into *buf, and closes fd: with no fstat, and one read
// when the file still has size bytes. A file found to have grown is read as readFile
// reads it.
func readKnown(fd int, buf *[]byte, size, mtime, maxSize int64) ([]byte, time.Time, error) {
	if maxSize > 0 && size > maxSize {
		syscall.Close(fd)
		return nil, time.Time{}, errTooLarge
	}
	need := int(size) + 1
	if cap(*buf) < need {
		*buf = make([]byte, need+need/8+512)
	}
	b := (*buf)[:need]
	n := 0
	for n < need {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return nil, time.Time{}, err
		}
		n += m
		if m == 0 || n == int(size) {
			break // what the index holds, or the file shrank
		}
	}
	if n == need {
		if _, err := syscall.Seek(fd, 0, 0); err != nil {
			syscall.Close(fd)
			return nil, time.Time{}, err
		}
		return readFile(fd, buf, maxSize)
	}
	syscall.Close(fd)
	return b[:n], time.Unix(0, mtime), nil
}
