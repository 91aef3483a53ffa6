package checkpoint

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes data to a new file in the directory dir that has no name until it
// is whole, then links it as name: a kill at any moment leaves either nothing (the kernel
// frees an unnamed file with its last descriptor) or the whole content. It costs fewer
// system calls and directory updates than a temporary name renamed into place. ok is
// false when the file system or the system cannot do it (no O_TMPFILE, no /proc): the
// caller writes the content another way.
func writeUnnamed(dir, name string, data []byte) (ok bool, err error) {
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
	if err := crashPoint("store-before-rename"); err != nil {
		return true, err
	}
	// Linking a descriptor needs a privilege unless it goes through /proc.
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
	switch {
	case err == nil || errors.Is(err, unix.EEXIST): // kept already, whole
		return true, nil
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EXDEV):
		return false, nil
	}
	return true, err
}
