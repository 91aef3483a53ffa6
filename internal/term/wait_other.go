//go:build !linux

package term

import "os"

// Look returns [Unknown]: without Linux's /proc, only silence tells that a program
// waits for input.
func Look(*os.File, string, func() []int) Probe { return Probe{Reading: Unknown} }

// Foreground returns "": the foreground program's name is not to be had here.
func Foreground(*os.File) string { return "" }
