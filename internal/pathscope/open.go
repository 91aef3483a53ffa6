package pathscope

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// ErrChanged is wrapped by the refusal of a path that stopped leading where it was checked
// to lead between the check and the open: a file or directory on the way was replaced
// (usually by a symlink). Nothing was read or written.
var ErrChanged = errors.New("path changed while it was being opened")

// Open opens the canonical path real (as returned by [Resolver.Resolve], or found by a
// walk), through the allowed root that holds it, so the kernel refuses to leave that root
// even if a component is swapped for a symlink meanwhile. It then checks what was actually
// opened: it must be real itself, allowed and not denied. flag is as for [os.OpenFile];
// nothing is created.
func (r *Resolver) Open(real string, flag int) (*os.File, error) {
	root := r.rootOf(real)
	if root == "" {
		return nil, outside(real)
	}
	// With no rule at all there is nothing to check what was opened against: a system
	// without /proc still works then.
	f, err := openBeneath(root, real, flag, r.Confined() || len(r.denyDirs)+len(r.patterns) > 0)
	if err != nil {
		return nil, err
	}
	if err := r.Check(real); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// rootOf returns the allowed root holding real (the longest), "/" when unconfined, or "".
func (r *Resolver) rootOf(real string) string {
	if len(r.roots) == 0 {
		return "/"
	}
	best := ""
	for _, root := range r.roots {
		if isUnder(real, root) && len(root) > len(best) {
			best = root
		}
	}
	return best
}

// OpenBeneath opens real, an absolute clean path under the directory root, through root:
// no component may lead outside root, and what was opened must be real itself (its path
// as the kernel knows it), or the open is refused with [ErrChanged].
func OpenBeneath(root, real string, flag int) (*os.File, error) {
	return openBeneath(root, real, flag, true)
}

func openBeneath(root, real string, flag int, mustVerify bool) (*os.File, error) {
	rel, ok := relBeneath(root, real)
	if !ok {
		return nil, outside(real)
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", root, err)
	}
	defer rt.Close()
	f, err := rt.OpenFile(rel, flag&^(os.O_CREATE|os.O_EXCL|os.O_TRUNC)|syscall.O_CLOEXEC, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && (pe.Err.Error() == "path escapes from parent" || errors.Is(pe.Err, syscall.ELOOP)) {
			return nil, changed(real)
		}
		if errors.As(err, &pe) {
			return nil, &os.PathError{Op: pe.Op, Path: real, Err: pe.Err}
		}
		return nil, err
	}
	if !mustVerify && !fdPathExact {
		return f, nil // no rule to check against, and a path that may differ in spelling
	}
	got, err := FdPath(f)
	if err != nil && !mustVerify && errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: cannot tell what %s opened (%v), so it was not used", ErrDenied, real, err)
	}
	if got != real {
		f.Close()
		return nil, changed(real)
	}
	return f, nil
}

func changed(real string) error {
	return fmt.Errorf("%w: %w: %s now leads somewhere else (a file or directory on the way was replaced); nothing was read or written, retry if the change was expected",
		ErrDenied, ErrChanged, real)
}

func outside(real string) error {
	return fmt.Errorf("%w: %s is outside the allowed directories", ErrDenied, real)
}

func relBeneath(root, real string) (string, bool) {
	switch {
	case real == root:
		return ".", true
	case root == "/" && strings.HasPrefix(real, "/"):
		return real[1:], true
	case isUnder(real, root):
		return real[len(root)+1:], true
	}
	return "", false
}

// FdPath returns the path the kernel has for the open file f: from /proc/self/fd on
// Linux (fdpath_linux.go), from fcntl(F_GETPATH) on macOS (fdpath_darwin.go).
func FdPath(f *os.File) (string, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var p string
	var lerr error
	cerr := conn.Control(func(fd uintptr) { p, lerr = fdPath(fd) })
	if cerr != nil {
		return "", cerr
	}
	if lerr != nil {
		return "", lerr
	}
	return p, nil
}
