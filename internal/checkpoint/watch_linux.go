package checkpoint

import (
	"errors"
	"path"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher names the paths that changed under the watched directories, from inotify. The
// kernel queues an event as the change is made, so once a command has exited, reading
// the queue until it is empty gives every change it made; nothing needs to wait.
type watcher struct {
	fd     int
	wds    map[int]string // watch → directory, relative to the root
	byPath map[string]int
	buf    []byte
}

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

func newWatcher() (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &watcher{fd: fd, wds: map[int]string{}, byPath: map[string]int{}, buf: make([]byte, 64<<10)}, nil
}

// add watches the directory abs, known as rel.
func (w *watcher) add(abs, rel string) error {
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	if err != nil {
		return err
	}
	if old, ok := w.wds[wd]; ok && old != rel && w.byPath[old] == wd {
		delete(w.byPath, old) // the same directory, moved
	}
	w.wds[wd] = rel
	w.byPath[rel] = wd
	return nil
}

// removeUnder stops watching rel and the directories under it.
func (w *watcher) removeUnder(rel string) {
	prefix := rel + "/"
	for p, wd := range w.byPath {
		if p == rel || strings.HasPrefix(p, prefix) {
			unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.byPath, p)
			delete(w.wds, wd)
		}
	}
}

// drain adds to dirty every path the queued events name, and reports whether events were
// lost (the queue overflowed), when only a walk of the tree can say what changed.
func (w *watcher) drain(dirty map[string]bool) (lost bool) {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return lost // EAGAIN: the queue is empty
		}
		if n <= 0 {
			return lost
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameBytes := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				lost = true
				continue
			}
			dir, ok := w.wds[int(ev.Wd)]
			if !ok {
				continue
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				if w.byPath[dir] == int(ev.Wd) {
					delete(w.byPath, dir)
				}
				delete(w.wds, int(ev.Wd))
				continue
			}
			name := strings.TrimRight(string(nameBytes), "\x00")
			switch {
			case name != "":
				dirty[path.Join(dir, name)] = true
			case dir != "":
				dirty[dir] = true
			}
		}
	}
}

func (w *watcher) close() {
	unix.Close(w.fd)
}
