package term

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxProbed bounds the processes a probe looks at.
const maxProbed = 64

// Look returns the kernel's view of the foreground process group of the terminal whose
// master is master and whose slave is named slave (/dev/pts/N). pids lists the command's
// processes, as far as they are tracked; only those in the foreground group count. The
// group's leader is looked at first, and pids called only when it does not read the
// terminal itself (a shell waiting for its child, say).
//
// It uses TIOCGPGRP for the foreground group, and, for each of its processes,
// /proc/PID/stat (asleep?), /proc/PID/syscall (in which system call, on which
// descriptor) and /proc/PID/fd (is that descriptor the terminal?); and TIOCINQ on the
// slave: a program with input typed ahead has yet to read it, whatever it sleeps in.
func Look(master *os.File, slave string, pids func() []int) Probe {
	pgrp, err := foreground(master)
	if err != nil {
		return Probe{Reading: Unknown}
	}
	best := Probe{Reading: Busy, Runs: map[int]uint64{}}
	seen := 0
	look := func(pid int) {
		if seen >= maxProbed {
			return
		}
		st, ok := readStat(pid)
		if !ok || st.pgrp != pgrp {
			return
		}
		seen++
		if st.state != 'S' {
			return // running: it has yet to sleep, so it counts as having run since any probe
		}
		best.Runs[pid] = runs(pid)
		if r := waitsOn(pid, slave); r > best.Reading {
			best.Reading = r
		}
	}
	look(pgrp)
	if best.Reading < Reading {
		for _, pid := range pids() {
			if pid != pgrp {
				look(pid)
			}
		}
	}
	if seen == 0 {
		return Probe{Reading: Unknown}
	}
	if best.Reading > Busy && unread(slave) {
		best.Reading = Busy // typed ahead: it has input it has yet to read
	}
	return best
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

type stat struct {
	state byte
	pgrp  int
}

// readStat reads a process's state and process group from /proc/PID/stat.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold anything
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return stat{}, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return stat{state: f[0][0], pgrp: pgrp}, err == nil
}

// runs returns how often pid was scheduled (the third field of /proc/PID/schedstat),
// or, without schedstat, its context switches.
func runs(pid int) uint64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	if b, err := os.ReadFile(dir + "schedstat"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 3 {
			if n, err := strconv.ParseUint(f[2], 10, 64); err == nil {
				return n
			}
		}
	}
	b, _ := os.ReadFile(dir + "status")
	var n uint64
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
			m, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			n += m
		}
	}
	return n
}

// waitsOn says how surely the sleeping process pid waits to read the terminal slave.
func waitsOn(pid int, slave string) View {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return Busy
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return Busy // "running", or "-1 ..." when not in a system call
	}
	nr, err1 := strconv.Atoi(f[0])
	arg0, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	if err1 != nil || err2 != nil {
		return Busy
	}
	isTTY := func(fd uint64) bool {
		l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatUint(fd, 10))
		return err == nil && l == slave
	}
	switch kind(nr) {
	case callRead:
		if isTTY(arg0) {
			return Reading
		}
	case callSelect:
		// arg0 is the highest descriptor waited for, plus one: with only a few, the
		// terminal among them is what it waits for.
		for fd := uint64(0); fd < min(arg0, 8); fd++ {
			if isTTY(fd) {
				return Reading
			}
		}
	case callPoll:
		if isTTY(0) {
			return Polling
		}
	}
	return Busy
}

type call int

const (
	callOther call = iota
	callRead
	callSelect
	callPoll
)
