package checkpoint

import (
	"bytes"
	"io"
	"io/fs"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readDir calls fn with the name of each entry of a directory (but . and ..) and what
// lstat says of it; name is valid only during the call. The directory is fd, whose fstat
// is m, or abs opened when fd < 0; it is closed on return. Its names are those of old when
// ls says old still holds them, else read with getdents into buf; readDir returns the
// listing it used, old or a new one (nil if ls does not keep one, or on an error). Each
// entry is looked up from the directory's descriptor: a walk of a deep tree resolves each
// path once, not once for every name under it, and pays no more system calls than it must
// (os.Open would also register the descriptor with the poller). The name given to fstatat
// is the one in buf or the listing, ended with a NUL: nothing is allocated for an entry.
//
// A subdirectory whose name open approves is opened from the directory's descriptor and
// its lstat is fstat of that: fn gets the descriptor (to keep, or close with closeDir),
// which costs the walk no more system calls than an fstatat and an open by path would,
// and resolves no path. Otherwise, or if it is not a directory by then, fn gets -1.
func readDir(fd int, abs string, m meta, buf []byte, old *listing, ls listings, open func(name []byte) bool, fn func(name []byte, m meta, sub int, p *node) *node) (*listing, error) {
	var err error
	var st unix.Stat_t
	if fd < 0 {
		for {
			fd, err = unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		defer unix.Close(fd)
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, &fs.PathError{Op: "fstat", Path: abs, Err: err}
		}
		m = metaOfStat(&st)
	} else {
		defer unix.Close(fd)
	}
	// entry looks up the entry name (ended with a NUL) of type typ, whose node p may be,
	// and returns the node fn gives (p if the entry is no more).
	entry := func(typ byte, name []byte, p *node) *node {
		i := len(name) - 1
		if typ == unix.DT_DIR && open(name[:i]) {
			if sub, err := openatC(fd, name); err == nil {
				if err := unix.Fstat(sub, &st); err == nil {
					return fn(name[:i], metaOfStat(&st), sub, p)
				}
				unix.Close(sub)
			}
		}
		if err := fstatatC(fd, name, &st); err == nil {
			return fn(name[:i], metaOfStat(&st), -1, p)
		}
		return p
	}
	if ls.holds(old, m) {
		k := 0
		for off := 0; off < len(old.names); k++ {
			i := bytes.IndexByte(old.names[off+1:], 0)
			old.nodes[k] = entry(old.names[off], old.names[off+1:off+i+2], old.nodes[k])
			off += i + 2
		}
		return old, nil
	}
	var l *listing
	if ls.keeps(m) {
		// The time is read before the names: a change the names miss is made after it.
		l = &listing{dev: m.dev, ino: m.ino, mtime: m.mtime, ctime: m.ctime, read: time.Now().UnixNano()}
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: abs, Err: err}
		}
		if n <= 0 {
			return l, nil
		}
		// struct linux_dirent64: ino (8 bytes), off (8), reclen (2), type (1), name.
		for off := 0; off < n; {
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			off += reclen
			i := bytes.IndexByte(name, 0)
			if i < 0 {
				continue // not a name the kernel makes
			}
			name = name[:i+1]
			if string(name) == ".\x00" || string(name) == "..\x00" {
				continue
			}
			p := entry(typ, name, nil)
			if l != nil {
				l.names = append(append(l.names, typ), name...)
				l.nodes = append(l.nodes, p)
			}
		}
	}
}

// listingsOf says where a walk of root may keep listings: on root's file system, if its
// directories' times are known to follow their names (local file systems; not a network
// or FUSE one, whose times may come from elsewhere or be cached).
func listingsOf(root string, racy time.Duration) listings {
	var st unix.Stat_t
	var sfs unix.Statfs_t
	if unix.Stat(root, &st) != nil || unix.Statfs(root, &sfs) != nil {
		return listings{}
	}
	switch uint32(sfs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC:
		return listings{dev: uint64(st.Dev), ok: true, racy: int64(racy)}
	}
	return listings{}
}

// openatC opens the directory name (which ends with a NUL) in the directory dirfd, not
// following a symlink.
func openatC(dirfd int, name []byte) (int, error) {
	for {
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&name[0])),
			unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0, 0, 0)
		switch e {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, e
	}
}

// closeDir closes a descriptor readDir gave.
func closeDir(fd int) { unix.Close(fd) }

func metaOfStat(st *unix.Stat_t) meta {
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
	return meta{mode: mode, dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// metaOf is what info (from os.Lstat) says that the baseline keeps.
func metaOf(info fs.FileInfo) meta {
	m := meta{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		m.dev, m.ino = uint64(st.Dev), st.Ino
		m.ctime = st.Ctim.Nano()
	}
	return m
}

// openRead opens the file at name for reading, not following a final symlink and not
// waiting on a FIFO. The descriptor is used as it is, not through os.File, which would
// try to register it with the poller (three more system calls a file).
func openRead(name string) (io.ReadCloser, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return rawFile(fd), nil
	}
}

type rawFile int

func (f rawFile) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f rawFile) Close() error { return unix.Close(int(f)) }

// readFile is os.ReadFile without the poller's system calls.
func readFile(name string) ([]byte, error) {
	f, err := openRead(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.(rawFile)), &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	data := make([]byte, 0, st.Size+1) // one byte more, to read the end in the same call
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew
		}
	}
}
