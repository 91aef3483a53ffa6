package shell

import (
	"errors"

	"golang.org/x/sys/unix"
)

// On macOS, processes are looked up with sysctl. Another process's environment is not
// read, so the processes a command started that left its process group (setsid, a
// double fork into a daemon) cannot be found, and are not stopped with it.

// Marked finds nothing on macOS: processes are not found by their environment here.
func Marked(string, int) []int { return nil }

// szomb is the state of a zombie in a kinfo_proc (SZOMB in <sys/proc.h>).
const szomb = 5

// zombie reports whether pid is gone or a zombie.
func zombie(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == szomb
}

// groupRunning reports whether a member of group pgid is not a zombie.
func groupRunning(pgid int) bool {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return true
	}
	for _, kp := range kps {
		if kp.Eproc.Pgid == int32(pgid) && kp.Proc.P_stat != szomb {
			return true
		}
	}
	return false
}

// AdoptOrphans fails on macOS, which has no child subreaper: processes a command leaves
// behind are reaped by launchd, and those that leave its process group (setsid) are
// neither found nor stopped with it.
func AdoptOrphans() error {
	return errors.New("macOS has no child subreaper: processes a command leaves behind that leave its process group (setsid) are not tracked or stopped with it")
}
