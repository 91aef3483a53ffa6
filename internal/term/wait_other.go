//go:build !linux

package term

import "os"

// Prober looks at a terminal's foreground; here it says [Unknown]: without Linux's
// /proc, only silence tells that a program waits for input.
type Prober struct{}

// NewProber returns a prober that says [Unknown].
func NewProber(*os.File, string, func() []int) *Prober { return &Prober{} }

// Look returns [Unknown].
func (*Prober) Look() Probe { return Probe{Reading: Unknown} }

// Before returns [Unknown].
func (*Prober) Before() Probe { return Probe{Reading: Unknown} }

// Close does nothing.
func (*Prober) Close() {}

// Foreground returns "": the foreground program's name is not to be had here.
func Foreground(*os.File) string { return "" }
