package shell

import (
	"os"
	"syscall"

	"github.com/mjkoo/boris/internal/procfs"
)

// The census: while commands tracked without a cgroup run (see [family]), Boris reads
// /proc now and then and places every process in the families it belongs to, by ancestry
// or, for an orphan reparented to Boris, by session, group or start time.

// scan reads /proc and adds to each family tracked without a cgroup the processes that
// belong to it; zombie orphans are reaped.
func scan() {
	registry.spawn.Lock() // no shell is between fork and registration meanwhile
	defer registry.spawn.Unlock()
	scanLocked()
}

// scanLocked is [scan], with registry.spawn held.
func scanLocked() {
	procs := procfs.All()
	c := census{byPID: make(map[int]procfs.Stat, len(procs)), owners: make(map[int][]*family), shells: make(map[int]bool)}
	for _, p := range procs {
		c.byPID[p.PID] = p
	}
	registry.mu.Lock()
	c.recount()
	for _, p := range procs { // oldest first: a parent comes before its children
		if c.owners[p.PID] != nil {
			continue
		}
		fams := c.claimants(p)
		if len(fams) == 0 {
			continue
		}
		c.owners[p.PID] = fams
		for _, f := range fams {
			f.known[p.PID] = p.Start
		}
	}
	orphans := c.zombies()
	registry.mu.Unlock()
	for _, p := range orphans {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(p.PID, &ws, syscall.WNOHANG, nil)
	}
}

// census is what one [scan] knows: every process, which families each belongs to, the
// families' shells, and the families tracked without a cgroup. It is used with
// registry.mu held.
type census struct {
	byPID  map[int]procfs.Stat
	owners map[int][]*family
	shells map[int]bool
	open   []*family
}

// recount keeps, of each family's known processes, those still running (with the same
// start time, so not a reused pid), and records whose they are.
func (c *census) recount() {
	for f := range registry.families {
		c.shells[f.shell] = true
		if f.cg != "" {
			continue
		}
		for pid, start := range f.known {
			p, ok := c.byPID[pid]
			if !ok || start != 0 && p.Start != start {
				delete(f.known, pid) // gone, or its pid reused
				continue
			}
			f.known[pid] = p.Start
			c.owners[pid] = append(c.owners[pid], f)
		}
		c.open = append(c.open, f)
	}
}

// claimants returns the families that process p, not yet known to any, belongs to: its
// parent's, when the parent is older; for an orphan reparented to Boris, the family whose
// session or group it is in, or else the families running when it started.
func (c *census) claimants(p procfs.Stat) []*family {
	switch parent, ok := c.byPID[p.PPID]; {
	case ok && c.owners[p.PPID] != nil && parent.Start <= p.Start:
		return c.owners[p.PPID]
	case !c.orphan(p):
		return nil
	}
	// A pid stays reserved while it names a live session or group, so a member's
	// session or group id says whose the orphan is.
	if fams := c.owners[p.SID]; fams != nil {
		return fams
	}
	if fams := c.owners[p.PGID]; fams != nil {
		return fams
	}
	var fams []*family
	for _, f := range c.open {
		if f.start <= p.Start+1 && (f.end == 0 || p.Start <= f.end+1) {
			fams = append(fams, f)
		}
	}
	return fams
}

// orphan reports whether p was reparented to Boris: a child in a session other than
// Boris's own that is not a family's shell.
func (c *census) orphan(p procfs.Stat) bool {
	return p.PPID == self && p.SID != mySession && !c.shells[p.PID]
}

// zombies forgets the families' members that have exited and returns those that are
// orphans, for the caller to reap once it no longer holds registry.mu.
func (c *census) zombies() []procfs.Stat {
	var orphans []procfs.Stat
	for _, f := range c.open {
		for pid := range f.known {
			if p := c.byPID[pid]; p.Zombie {
				delete(f.known, pid)
				if c.orphan(p) {
					orphans = append(orphans, p)
				}
			}
		}
	}
	return orphans
}

// reapOrphan collects st's exit status if it is an orphan reparented to Boris: a child
// in a session other than Boris's own, which no shell's Process waits for. The caller
// holds no lock that a Process's own reaping could need.
func reapOrphan(st procfs.Stat) {
	if st.PPID != self || st.SID == mySession || isShell(st.PID) {
		return
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(st.PID, &ws, syscall.WNOHANG, nil)
}

var self = os.Getpid()

// isShell reports whether pid is the shell of a registered family, reaped by its Process.
func isShell(pid int) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for f := range registry.families {
		if f.shell == pid {
			return true
		}
	}
	return false
}
