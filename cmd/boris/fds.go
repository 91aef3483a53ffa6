package main

import (
	"os"
	"strconv"
	"syscall"
)

// keepListed marks the descriptors above 2 that dir lists close-on-exec.
func keepListed(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
