//go:build linux && (amd64 || arm64)

package checkpoint

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatC is lstat of name (which ends with a NUL) in the directory dirfd, without
// copying the name.
func fstatatC(dirfd int, name []byte, st *unix.Stat_t) error {
	for {
		_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&name[0])),
			uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}
