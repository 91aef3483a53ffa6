package term

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/procfs"
)

// maxProbed bounds the processes a probe looks at.
const maxProbed = 64

// Look returns the kernel's view of the terminal's foreground process group. pids lists
// the command's processes, as far as they are tracked; only those in the foreground group
// count. The group's leader is looked at first, and pids called only when it does not
// read the terminal itself (a shell waiting for its child, say).
//
// It uses TIOCGPGRP for the foreground group, and, for each of its processes,
// /proc/PID/stat (asleep?), /proc/PID/syscall (in which system call, on which
// descriptor) and /proc/PID/fd (is that descriptor the terminal?); and TIOCINQ on the
// slave: a program with input typed ahead has yet to read it, whatever it sleeps in.
// After [Prober.Close] it says [Unknown].
func (p *Prober) Look() Probe {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Probe{Reading: Unknown}
	}
	pgrp, err := foreground(p.master)
	if err != nil {
		return Probe{Reading: Unknown}
	}
	best := Probe{Reading: Busy, Runs: map[int]uint64{}}
	seen, leaderRuns, leaderReads := 0, false, false
	look := func(pid int) {
		if seen >= maxProbed {
			return
		}
		f := p.files(pid)
		st, ok := f.stat()
		if !ok || st.PGID != pgrp {
			return
		}
		seen++
		if st.State != 'S' {
			leaderRuns = leaderRuns || pid == pgrp
			return // running: it has yet to sleep, so it counts as having run since any probe
		}
		best.Runs[pid] = f.runs()
		r := f.waitsOn(p.slave)
		best.Reading = max(best.Reading, r)
		leaderReads = leaderReads || pid == pgrp && r == Reading
	}
	look(pgrp)
	// A leader seen running once is most likely about to sleep (a program at work on what
	// was typed): the others are looked for from the second look in a row that sees it
	// running, which spares the costly listing of the command's processes.
	skip := leaderRuns && !p.leaderRan
	p.leaderRan = leaderRuns
	if best.Reading < Reading && !skip {
		for _, pid := range p.pids() {
			if pid != pgrp {
				look(pid)
			}
		}
	}
	p.prune(pgrp)
	p.last = lastLook{pgrp: pgrp, leaderReads: leaderReads, runs: best.Runs[pgrp]}
	if seen == 0 {
		return Probe{Reading: Unknown}
	}
	if best.Reading > Busy && unread(p.slave) {
		best.Reading = Busy // typed ahead: it has input it has yet to read
	}
	return best
}

// Before returns a probe to tell, by [Probe.RanSince], whether the foreground processes
// ran since: its Runs are those a [Prober.Look] would give; its Reading may not say that
// input was typed ahead. When the last look saw the group's leader read the terminal,
// and the leader has not run since (nor the foreground changed), the leader is still in
// that read, and no other process was looked at then: its run count is all there is to
// read.
func (p *Prober) Before() Probe {
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if !last.leaderReads {
		return p.Look()
	}
	pgrp, err := foreground(p.master)
	if err != nil || pgrp != last.pgrp {
		return p.Look()
	}
	p.mu.Lock()
	f, ok := p.procs[pgrp]
	var st procfs.Stat
	if ok && !p.closed {
		st, ok = f.statKept()
	}
	same := ok && !p.closed && st.State == 'S' && st.PGID == pgrp && f.runs() == last.runs
	p.mu.Unlock()
	if !same {
		return p.Look()
	}
	return Probe{Reading: Reading, Runs: map[int]uint64{pgrp: last.runs}}
}

// unread reports whether the terminal slave holds input its programs have not read.
func unread(slave string) bool {
	fd, err := unix.Open(slave, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	return err == nil && n > 0
}

// Foreground returns the name of the terminal's foreground program (its process group
// leader's command name, as /proc/PID/comm gives it), or "".
func Foreground(master *os.File) string {
	pgrp, err := foreground(master)
	if err != nil {
		return ""
	}
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pgrp) + "/comm")
	return strings.TrimSpace(string(b))
}

func foreground(master *os.File) (int, error) {
	rc, err := master.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pgrp int
	cerr := rc.Control(func(fd uintptr) { pgrp, err = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) })
	if cerr != nil {
		return 0, cerr
	}
	return pgrp, err
}

type call int

const (
	callOther call = iota
	callRead
	callSelect
	callPoll
)
