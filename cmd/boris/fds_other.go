//go:build !linux

package main

// keepDescriptors marks every descriptor Boris inherited beyond stdin, stdout and stderr
// close-on-exec: commands get what Boris gives them, never, say, the write end of a pipe
// its parent waits on, which a background task would then hold open.
func keepDescriptors() { keepListed("/dev/fd") }
