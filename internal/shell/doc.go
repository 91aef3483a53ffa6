// Package shell runs one command: in its own process group, with stdin at EOF, bounded
// capture of its output, and the working directory and exported variables it ended with
// learned out of band; it stops the whole group on cancel.
//
// Words used in this package:
//   - A command's family is every process it started, however it got away from its
//     process group (setsid, a double fork): on Linux, its cgroup where Boris can make
//     one, else the processes found descending from it in /proc.
//   - A census is one scan of /proc: every process, and the families each belongs to.
package shell
