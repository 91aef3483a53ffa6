package procfs

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Stat is what Boris reads of a process in /proc/PID/stat.
type Stat struct {
	PID, PPID, PGID, SID int
	Comm                 string // the name of its program, as the kernel truncates it
	Start                uint64 // when it started: time since boot in clock ticks (see [BootTicks])
	State                byte   // R running, S asleep (interruptibly), D, T, Z...
	Zombie               bool   // it has exited, and is not reaped yet
}

// Read reads the stat of process pid; false if it is gone (or was never there).
func Read(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	return Parse(pid, b)
}

// Parse reads the stat line b of process pid: "pid (comm) state ppid pgrp session ...
// starttime ...". The name may hold spaces and parentheses, so it ends at the last ')'.
func Parse(pid int, b []byte) (Stat, bool) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return Stat{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return Stat{}, false
	}
	st := Stat{PID: pid, State: f[0][0], Zombie: f[0] == "Z" || f[0] == "X"}
	if open := bytes.IndexByte(b[:end], '('); open >= 0 {
		st.Comm = string(b[open+1 : end])
	}
	st.PPID, _ = strconv.Atoi(f[1])
	st.PGID, _ = strconv.Atoi(f[2])
	st.SID, _ = strconv.Atoi(f[3])
	st.Start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, true
}

// All reads every process's stat, oldest first (by start time, then pid), so that a
// parent comes before its children. /proc is not read at one instant: a process that
// starts or ends meanwhile may be missing.
func All() []Stat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	procs := make([]Stat, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := Read(pid); ok {
			procs = append(procs, st)
		}
	}
	slices.SortFunc(procs, func(a, b Stat) int {
		if a.Start != b.Start {
			if a.Start < b.Start {
				return -1
			}
			return 1
		}
		return a.PID - b.PID
	})
	return procs
}

// ClockTicks is how many clock ticks (USER_HZ) make a second: 100 on every Linux
// architecture Go supports.
const ClockTicks = 100

// BootTicks is the time since boot in the clock ticks that [Stat.Start] counts in.
func BootTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Sec)*ClockTicks + uint64(ts.Nsec)*ClockTicks/1e9
}
