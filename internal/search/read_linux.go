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
