package checkpoint

import (
	"errors"
	"io/fs"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes data to a new file in the directory dir that has no name until it
// is whole and has the mode perm (0: 0600 less the umask), then links it as name (in
// dir): a kill at any moment leaves either nothing (the kernel frees an unnamed file with
// its last descriptor) or the whole content. It costs fewer system calls and directory
// updates than a temporary name renamed into place. point names the crash point just
// before the link. ok is false when the file system or the system cannot do it (no
// O_TMPFILE, no /proc, no dir): the caller writes the content another way. A name that
// exists already is left as it is, and the error is fs.ErrExist.
func writeUnnamed(dir, name string, data []byte, perm fs.FileMode, point string) (ok bool, err error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, nil
	}
	return linkUnnamed(fd, name, data, perm, point)
}

// linkUnnamed is writeUnnamed with the unnamed file fd already open; it closes fd.
func linkUnnamed(fd int, name string, data []byte, perm fs.FileMode, point string) (ok bool, err error) {
	defer unix.Close(fd)
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true, err
		}
		data = data[n:]
	}
	if perm != 0 { // exactly, whatever the umask
		if err := unix.Fchmod(fd, unixMode(perm)); err != nil {
			return true, err
		}
	}
	if err := crashPoint(point); err != nil {
		return true, err
	}
	// Linking a descriptor needs a privilege unless it goes through /proc.
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return true, fs.ErrExist
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EXDEV):
		return false, nil
	}
	return true, err
}

// unixMode is the mode bits of m as chmod takes them.
func unixMode(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		bits |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		bits |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		bits |= unix.S_ISVTX
	}
	return bits
}

// spareFile keeps an unnamed file open in dir ahead of the next write there, made in the
// background after each write: making an inode is most of what writing a small new file
// costs, and this way a call does not wait for it. The spare dies with the process, like
// any unnamed file.
type spareFile struct {
	dir string

	mu      sync.Mutex
	fd      int // -1: none
	filling bool
	closed  bool
	broken  bool // unnamed files cannot be had or linked here
	wg      sync.WaitGroup
}

func newSpareFile(dir string) *spareFile { return &spareFile{dir: dir, fd: -1} }

// write is writeUnnamed, into the spare file if there is one.
func (s *spareFile) write(name string, data []byte, point string) (ok bool, err error) {
	s.mu.Lock()
	fd := s.fd
	s.fd = -1
	s.mu.Unlock()
	if fd < 0 {
		ok, err = writeUnnamed(s.dir, name, data, 0, point)
	} else {
		ok, err = linkUnnamed(fd, name, data, 0, point)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.broken = true
		return ok, err
	}
	if s.closed || s.filling || s.broken {
		return ok, err
	}
	s.filling = true
	s.wg.Go(func() {
		fd, err := unix.Open(s.dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.filling = false
		switch {
		case err != nil:
			s.broken = true
		case s.closed || s.fd >= 0:
			unix.Close(fd)
		default:
			s.fd = fd
		}
	})
	return ok, err
}

// close lets the spare file go.
func (s *spareFile) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	fd := s.fd
	s.fd = -1
	s.mu.Unlock()
	s.wg.Wait()
	if fd >= 0 {
		unix.Close(fd)
	}
}
