package search

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is every change to a directory's entries or its files that a search can see.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF |
	unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// Filesystems whose changes made on another machine raise no file events.
var remoteFS = map[int64]bool{
	0x6969:     true, // NFS
	0x517b:     true, // SMB
	0xff534d42: true, // CIFS
	0xfe534d42: true, // SMB2
	0x65735546: true, // FUSE (sshfs and the like)
	0x01021997: true, // 9P
	0x00c36400: true, // Ceph
	0x47504653: true, // GPFS
	0x5346414f: true, // AFS
	0x6b414653: true, // kAFS
}

// watcher reports changes under a tree through inotify.
type watcher struct {
	fd int // inotify: file's descriptor, kept here since file.Fd would make it blocking
	// file holds fd in the runtime's poller, so that a goroutine waiting for events
	// parks without holding a thread: a thread blocked in poll(2) would keep one of
	// GOMAXPROCS from the searches until the runtime took it back, up to 10 ms later,
	// and every search right after an event would run on one core fewer.
	file *os.File
	conn syscall.RawConn
	buf  []byte
	mu   sync.Mutex // orders stop and close
	// watches counts the calls of add.
	watches int
}

// newWatcher returns a watcher for the tree at root, or errNoEvents when its filesystem
// raises no reliable events or inotify is unavailable.
func newWatcher(root string) (*watcher, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return nil, err
	}
	if remoteFS[int64(st.Type)] {
		return nil, errNoEvents
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, errors.Join(errNoEvents, err)
	}
	file := os.NewFile(uintptr(fd), "inotify") // non-blocking: taken by the poller
	conn, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, errors.Join(errNoEvents, err)
	}
	return &watcher{fd: fd, file: file, conn: conn, buf: make([]byte, 64<<10)}, nil
}

// wait waits until events are queued (true) or stop was called (false). Woken by the
// poller, it reports true even if a search took the events meanwhile, as a wake from
// poll(2) did.
func (w *watcher) wait() bool {
	woken := false
	err := w.conn.Read(func(fd uintptr) bool {
		if woken {
			return true
		}
		woken = true
		// Events queued before the wait are seen here; otherwise the poller waits.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		for err == unix.EINTR {
			n, err = unix.Poll(fds, 0)
		}
		return n > 0 || err != nil
	})
	return err == nil
}

// stop ends a wait under way or to come.
func (w *watcher) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file != nil {
		_ = w.file.SetReadDeadline(time.Unix(1, 0))
	}
}

// add watches the directory at path; errWatchLimit says the user's watches ran out.
func (w *watcher) add(path string) (int, error) {
	if maxWatches > 0 && w.watches >= maxWatches {
		return -1, errWatchLimit
	}
	w.watches++
	wd, err := unix.InotifyAddWatch(w.fd, path, watchMask)
	if err == unix.ENOSPC {
		return -1, errWatchLimit
	}
	return wd, err
}

func (w *watcher) remove(wd int) { _, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) }

// close releases the watcher; no wait may be under way.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file != nil {
		w.file.Close()
		w.fd, w.file = -1, nil
	}
}

// drain calls fn for each event queued, without waiting for more.
func (w *watcher) drain(fn func(ev event)) error {
	for {
		n, err := unix.Read(w.fd, w.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return nil
		case err != nil:
			return err
		case n <= 0:
			return nil
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			raw := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(raw.Len)]
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			ev := event{wd: int(raw.Wd), name: string(name)}
			m := raw.Mask
			ev.overflow = m&unix.IN_Q_OVERFLOW != 0
			ev.gone = m&unix.IN_IGNORED != 0
			ev.entries = m&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0 ||
				m&unix.IN_ISDIR != 0 && m&unix.IN_ATTRIB != 0
			ev.self = m&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_ATTRIB) != 0 && ev.name == ""
			fn(ev)
			off += unix.SizeofInotifyEvent + int(raw.Len)
		}
	}
}

// openBeneath opens rel below the open directory dirfd without following any symlink.
func openBeneath(dirfd int, rel string, flag int) (int, error) {
	return openBeneathC(dirfd, append([]byte(rel), 0), flag)
}

// openBeneathC is openBeneath with rel a NUL-terminated string in a buffer of the caller's,
// so that a search opening thousands of files makes no string for each.
func openBeneathC(dirfd int, rel []byte, flag int) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flag | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(&rel[0])),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}
