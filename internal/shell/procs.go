package shell

import (
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Processes a command left behind are found here: by process group, and, where the
// system lets Boris read other processes' environments, by the mark in their environment
// ([Marked]), which finds those that left the group (setsid). procs_linux.go reads /proc;
// procs_darwin.go asks sysctl.

// mySession is this process's session; commands start sessions of their own.
var mySession, _ = unix.Getsid(0)

// StopMarked ends the processes [Marked] finds for mark: SIGTERM, then SIGKILL after
// grace for those still running.
func StopMarked(mark string, grace time.Duration) {
	// A second look finds a process that was between fork and exec at the first, when
	// its environment could not be read.
	for range 2 {
		pids := Marked(mark, 0)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		for deadline := time.Now().Add(grace); len(pids) > 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			pids = slices.DeleteFunc(pids, func(pid int) bool { return !running(pid) })
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// A killed process takes a moment to exit: return once it has.
		for deadline := time.Now().Add(time.Second); len(pids) > 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			pids = slices.DeleteFunc(pids, func(pid int) bool { return !running(pid) })
		}
	}
}

// running reports whether pid is a process that is not a zombie. An exited process from
// another session handed to this one as an orphan is reaped. Callers never pass a shell
// this package is still waiting for: [Marked] leaves out the command's own group.
func running(pid int) bool {
	if sid, err := unix.Getsid(pid); err == nil && sid != mySession {
		var ws syscall.WaitStatus
		if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid {
			return false
		}
	}
	return !zombie(pid)
}

// GroupAlive reports whether any process of group pgid still runs. Zombies waiting for a
// parent that does not reap them do not count.
func GroupAlive(pgid int) bool { return groupAlive(pgid) }

func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	// Something answers: it may only be zombies. Look for a member that is not one.
	return groupRunning(pgid)
}
