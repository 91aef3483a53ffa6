package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hideSecrets keeps the server's memory and start-up environment from the commands it
// runs, which run as the same user: the process is made non-dumpable, so that its
// /proc/PID/environ, cmdline, mem and the like can be read only with CAP_SYS_PTRACE; and
// the secrets are overwritten where the kernel shows the command line and environment
// the process started with, for a reader that has that capability (a server run as root).
// Strings holding a secret must be copied before: Go's arguments and environment point
// into that memory.
func hideSecrets(secrets ...string) {
	scrubStartMemory(secrets)
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// scrubStartMemory overwrites every occurrence of the secrets in the process's original
// argument and environment strings with asterisks.
func scrubStartMemory(secrets []string) {
	secrets = slicesNonEmpty(secrets)
	if len(secrets) == 0 {
		return
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return
	}
	// After the command name: state is field 3; arg_start..env_end are fields 48-51.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 49 {
		return
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer mem.Close()
	for _, r := range [][2]string{{f[45], f[46]}, {f[47], f[48]}} {
		start, err1 := strconv.ParseInt(r[0], 10, 64)
		end, err2 := strconv.ParseInt(r[1], 10, 64)
		if err1 != nil || err2 != nil || start <= 0 || end <= start || end-start > 64<<20 {
			continue
		}
		buf := make([]byte, end-start)
		if _, err := mem.ReadAt(buf, start); err != nil {
			continue
		}
		changed := false
		for _, s := range secrets {
			for j := bytes.Index(buf, []byte(s)); j >= 0; j = bytes.Index(buf, []byte(s)) {
				copy(buf[j:], bytes.Repeat([]byte{'*'}, len(s)))
				changed = true
			}
		}
		if changed {
			_, _ = mem.WriteAt(buf, start)
		}
	}
}

func slicesNonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
