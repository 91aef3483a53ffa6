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
func (f *family) movers() ([]uintptr, error)              { return nil, errors.New("no cgroups here") }
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

// StopStrays does nothing: without a subreaper, strays are not Boris's.
func StopStrays(time.Time, time.Duration) {}

// EndLeftovers does nothing where there are no cgroups.
func EndLeftovers() {}

// LimitProcesses does nothing: there are no cgroups here, and no RLIMIT_NPROC is set.
func LimitProcesses(int) {}

// DefaultProcessLimit is 0: commands' processes are not limited here.
func DefaultProcessLimit() int { return 0 }

func joinsPidsV1() bool               { return false }
func limitLine() string               { return "" }
func (f *family) overLimit() bool     { return false }
func (f *family) checkLimit() bool    { return false }
func (f *family) processLimit() int64 { return 0 }
