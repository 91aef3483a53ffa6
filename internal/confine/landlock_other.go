//go:build !linux

package confine

import (
	"errors"
	"syscall"
)

func kernelABI() int { return 0 }

func kernelErrata() uint64 { return 0 }

func canFilterNetwork() bool { return false }

func unsupported() string { return "Landlock exists only on Linux" }

// Domain is one Landlock domain; on this system there are none.
type Domain struct{}

// Domain fails: commands cannot be confined on this system.
func (p *Policy) Domain(write, read []string) (*Domain, error) {
	return nil, errors.New("commands cannot be confined: " + unsupported())
}

// ForkExec fails: a Domain cannot be made on this system.
func (d *Domain) ForkExec(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	return 0, errors.New("commands cannot be confined: " + unsupported())
}

// Close does nothing.
func (d *Domain) Close() {}
