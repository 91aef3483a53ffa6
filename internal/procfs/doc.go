// Package procfs reads what Boris needs of Linux's /proc: each process's parent, group,
// session, name, start time, state and whether it has exited, and the clock start times
// count in.
package procfs
