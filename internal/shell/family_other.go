//go:build !linux

package shell

import (
	"errors"
	"syscall"
	"time"
)

// family is a command's processes. Without Linux's cgroups and child subreapers, only
// its process group is tracked (see procs.go).
type family struct{}

func newFamily(*syscall.SysProcAttr, bool) *family        { return &family{} }
func (f *family) mover() (uintptr, error)                 { return 0, errors.New("no cgroups here") }
func (f *family) spawning()                               {}
func (f *family) failed()                                 {}
func (f *family) discard()                                {}
func (f *family) started(int)                             {}
func (f *family) withoutCgroup(*syscall.SysProcAttr) bool { return false }
func (f *family) release()                                {}
func (f *family) alive() bool                             { return false }
func (f *family) members() []int                          { return nil }
func (f *family) signal(syscall.Signal) bool              { return false }
func (f *family) kill()                                   {}

// UseCgroups does nothing where there are no cgroups.
func UseCgroups(bool) {}

func cgroupsUsable() bool { return false }

// CgroupsAvailable reports false: there are no cgroups here.
func CgroupsAvailable() bool { return false }

// StopAll does nothing more than the sessions did: without a subreaper, orphans are not
// Boris's.
func StopAll(time.Duration) {}
