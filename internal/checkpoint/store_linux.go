package checkpoint

import (
	"errors"
	"io/fs"
	"strconv"

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
