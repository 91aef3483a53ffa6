package term

import "time"

// View is what the kernel says of a terminal's foreground programs.
type View int

// The kernel's view of a terminal's foreground, from surest to none.
const (
	// Unknown: the kernel's view cannot be had here; only silence tells.
	Unknown View = iota
	// Busy: no foreground process is asleep waiting for the terminal.
	Busy
	// Polling: a foreground process sleeps in poll or epoll with the terminal open as its
	// stdin; which descriptors it waits for cannot be seen, so it may wait for something
	// else (a socket, a timer).
	Polling
	// Reading: a foreground process sleeps in read(2) on the terminal, or in select(2)
	// with the terminal among the few descriptors it waits for.
	Reading
)

// Probe is a look at a terminal's foreground process group.
type Probe struct {
	Reading View
	// Runs counts, per foreground process, how often it was scheduled: a process that
	// ran since an earlier Probe has had the chance to read what was typed since.
	Runs map[int]uint64
	// At is when input was typed after the probe, or zero.
	At time.Time
}

// RanSince reports whether a process that [Probe.Reading] is about has run since
// before, or was not there then.
func (p Probe) RanSince(before Probe) bool {
	if before.Runs == nil {
		return true
	}
	for pid, n := range p.Runs {
		if m, ok := before.Runs[pid]; !ok || n > m {
			return true
		}
	}
	return false
}
