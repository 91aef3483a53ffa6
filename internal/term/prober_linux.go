package term

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/procfs"
)

// Prober looks at a terminal's foreground again and again. It keeps the /proc files of
// the processes it looked at open between looks and reads them with pread: a look then
// costs a few system calls rather than a few dozen. A file kept open speaks of its
// process only: once that process has ended, reading it fails, and a new process given
// the same id is opened afresh. It is safe for concurrent use; Close it when done.
type Prober struct {
	master *os.File
	slave  string
	pids   func() []int

	mu     sync.Mutex
	procs  map[int]*procFiles
	looked map[int]bool // the processes the current look opened or read
	closed bool
	// leaderRan: the last look saw the group's leader running.
	leaderRan bool
	last      lastLook
	buf       [1024]byte
}

// NewProber returns a prober of the terminal whose master is master and whose slave is
// named slave (/dev/pts/N); pids lists the command's processes, as far as they are
// tracked.
func NewProber(master *os.File, slave string, pids func() []int) *Prober {
	return &Prober{master: master, slave: slave, pids: pids, procs: map[int]*procFiles{}, looked: map[int]bool{}}
}

// Close closes the files kept open; later looks say [Unknown].
func (p *Prober) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid, f := range p.procs {
		f.close()
		delete(p.procs, pid)
	}
	p.closed = true
}

// lastLook is what the last look saw of the group's leader.
type lastLook struct {
	pgrp        int
	leaderReads bool   // asleep reading the terminal
	runs        uint64 // its run count then
}

// files returns pid's files, opened if need be. p.mu is held.
func (p *Prober) files(pid int) *procFiles {
	p.looked[pid] = true
	f, ok := p.procs[pid]
	if !ok {
		f = openProc(pid, p.buf[:])
		p.procs[pid] = f
	}
	return f
}

// maxKept bounds the processes whose files a prober keeps open between looks: a busy
// foreground (a parallel build) is read afresh each time, its leader excepted.
const maxKept = 8

// prune closes the files of processes the last look did not look at, and past maxKept
// those of all but the leader pgrp. p.mu is held.
func (p *Prober) prune(pgrp int) {
	many := len(p.procs) > maxKept
	for pid, f := range p.procs {
		if !p.looked[pid] || many && pid != pgrp {
			f.close()
			delete(p.procs, pid)
		}
	}
	clear(p.looked)
}

// procFiles are the open /proc files of one process; -1 for one not opened.
type procFiles struct {
	pid                     int
	statFD, callFD, schedFD int
	fdDir                   int // /proc/PID/fd, for readlinkat
	buf                     []byte
}

func openProc(pid int, buf []byte) *procFiles {
	f := &procFiles{pid: pid, statFD: -1, callFD: -1, schedFD: -1, fdDir: -1, buf: buf}
	f.open()
	return f
}

func (f *procFiles) open() {
	dir := "/proc/" + strconv.Itoa(f.pid) + "/"
	f.statFD = openRO(dir + "stat")
	f.callFD = openRO(dir + "syscall")
	f.schedFD = openRO(dir + "schedstat")
	f.fdDir = openRO(dir + "fd")
}

func openRO(path string) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func (f *procFiles) close() {
	for _, fd := range []*int{&f.statFD, &f.callFD, &f.schedFD, &f.fdDir} {
		if *fd >= 0 {
			_ = unix.Close(*fd)
			*fd = -1
		}
	}
}

// read returns the contents of the file open as fd, from its start.
func (f *procFiles) read(fd int) ([]byte, bool) {
	if fd < 0 {
		return nil, false
	}
	n, err := unix.Pread(fd, f.buf, 0)
	if err != nil || n <= 0 {
		return nil, false
	}
	return f.buf[:n], true
}

// stat reads the process's state and process group from /proc/PID/stat. A file that
// can no longer be read (its process ended) is opened again once: the id may be a new
// process's.
func (f *procFiles) stat() (procfs.Stat, bool) {
	b, ok := f.read(f.statFD)
	if !ok {
		f.close()
		f.open()
		b, ok = f.read(f.statFD)
	}
	if !ok {
		return procfs.Stat{}, false
	}
	return procfs.Parse(f.pid, b)
}

// statKept is stat from the file kept open only: the process looked at last, or none.
func (f *procFiles) statKept() (procfs.Stat, bool) {
	b, ok := f.read(f.statFD)
	if !ok {
		return procfs.Stat{}, false
	}
	return procfs.Parse(f.pid, b)
}

// runs returns how often the process was scheduled (the third field of
// /proc/PID/schedstat), or, without schedstat, its context switches.
func (f *procFiles) runs() uint64 {
	if b, ok := f.read(f.schedFD); ok {
		if fl := bytes.Fields(b); len(fl) == 3 {
			if n, err := strconv.ParseUint(string(fl[2]), 10, 64); err == nil {
				return n
			}
		}
	}
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(f.pid) + "/status")
	var n uint64
	for l := range bytes.SplitSeq(b, []byte("\n")) {
		if k, v, ok := bytes.Cut(l, []byte(":")); ok && bytes.HasSuffix(k, []byte("ctxt_switches")) {
			m, _ := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			n += m
		}
	}
	return n
}

// waitsOn says how surely the sleeping process waits to read the terminal slave.
func (f *procFiles) waitsOn(slave string) View {
	b, ok := f.read(f.callFD)
	if !ok {
		return Busy
	}
	fl := bytes.Fields(b)
	if len(fl) < 2 {
		return Busy // "running", or "-1 ..." when not in a system call
	}
	nr, err1 := strconv.Atoi(string(fl[0]))
	arg0, err2 := strconv.ParseUint(string(bytes.TrimPrefix(fl[1], []byte("0x"))), 16, 64)
	if err1 != nil || err2 != nil {
		return Busy
	}
	switch kind(nr) {
	case callRead:
		if f.isTTY(arg0, slave) {
			return Reading
		}
	case callSelect:
		// arg0 is the highest descriptor waited for, plus one: with only a few, the
		// terminal among them is what it waits for.
		for fd := uint64(0); fd < min(arg0, 8); fd++ {
			if f.isTTY(fd, slave) {
				return Reading
			}
		}
	case callPoll:
		if f.isTTY(0, slave) {
			return Polling
		}
	}
	return Busy
}

// isTTY reports whether the process's descriptor fd is the terminal slave.
func (f *procFiles) isTTY(fd uint64, slave string) bool {
	if f.fdDir < 0 {
		return false
	}
	n, err := unix.Readlinkat(f.fdDir, strconv.FormatUint(fd, 10), f.buf)
	return err == nil && string(f.buf[:n]) == slave
}
