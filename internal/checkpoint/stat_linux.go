package checkpoint

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lstatAt is os.Lstat of name in the directory d, looked up from d's descriptor: a walk
// of a deep tree resolves each path once, not once for every name under it.
func lstatAt(d *os.File, name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		break
	}
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return &statInfo{name: name, mode: mode, st: syscall.Stat_t{
		Ino: st.Ino, Size: st.Size,
		Mtim: syscall.Timespec{Sec: st.Mtim.Sec, Nsec: st.Mtim.Nsec},
		Ctim: syscall.Timespec{Sec: st.Ctim.Sec, Nsec: st.Ctim.Nsec},
	}}, nil
}

// statInfo is the fs.FileInfo of lstatAt; Sys is a *syscall.Stat_t with the inode, size
// and times.
type statInfo struct {
	name string
	mode fs.FileMode
	st   syscall.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode  { return s.mode }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.mode.IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

// statNode is what the baseline keeps of info to tell, later, whether the path changed.
func statNode(info fs.FileInfo) *node {
	n := &node{}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		n.ino = st.Ino
		n.mtime = st.Mtim.Nano()
		n.ctime = st.Ctim.Nano()
	}
	return n
}
