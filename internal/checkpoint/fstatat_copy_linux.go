//go:build linux && !(amd64 || arm64)

package checkpoint

import "golang.org/x/sys/unix"

// fstatatC is lstat of name (which ends with a NUL) in the directory dirfd.
func fstatatC(dirfd int, name []byte, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, string(name[:len(name)-1]), st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}
