package confine

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights this package knows, by the ABI that brought them
// (https://docs.kernel.org/userspace-api/landlock.html).
const (
	fsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsRefer       = unix.LANDLOCK_ACCESS_FS_REFER     // ABI 2: rename and link across directories
	fsTruncate    = unix.LANDLOCK_ACCESS_FS_TRUNCATE  // ABI 3
	fsIoctlDev    = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV // ABI 5
	fsResolveUnix = 1 << 16                           // ABI 9: connect to a named UNIX socket

	fsRead = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fsFile are the rights that make sense on a file rather than a directory.
	fsFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | fsTruncate | fsIoctlDev

	netTCP = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
)

// handledFS returns the file system rights a kernel with the given ABI can restrict.
func handledFS(abi int) uint64 {
	var fs uint64
	if abi >= 1 {
		fs |= fsV1
	}
	if abi >= 2 {
		fs |= fsRefer
	}
	if abi >= 3 {
		fs |= fsTruncate
	}
	if abi >= 5 {
		fs |= fsIoctlDev
	}
	if abi >= 9 {
		fs |= fsResolveUnix
	}
	return fs
}

// rights returns what a rule of kind a allows, out of all rights.
func (a access) rights(all uint64) uint64 {
	switch a {
	case readWrite:
		return all
	case readExec:
		return all & (fsRead | unix.LANDLOCK_ACCESS_FS_EXECUTE)
	case readOnly:
		return all & fsRead
	case device:
		return all & (unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | fsTruncate | fsIoctlDev)
	case list:
		return all & unix.LANDLOCK_ACCESS_FS_READ_DIR
	}
	return 0
}

var kernelABI = sync.OnceValue(func() int {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(abi)
})

var kernelErrata = sync.OnceValue(func() uint64 {
	errata, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
	if errno != 0 {
		return 0
	}
	return uint64(errata)
})

func unsupported() string {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch errno {
	case 0:
		return "Landlock is available"
	case unix.EOPNOTSUPP:
		return "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot parameter)"
	default:
		return "this kernel has no Landlock (Linux 5.13 or later, with Landlock enabled, is needed)"
	}
}

// restrictThread puts the calling thread, which must be locked to its goroutine and never
// unlocked, into a new Landlock domain allowing rules. Only a launcher calls it, never
// Boris.
func restrictThread(p *Policy, rules []rule) error {
	attr := unix.LandlockRulesetAttr{}
	if p.paths {
		attr.Access_fs = handledFS(p.abi)
	}
	if p.network {
		attr.Access_net = netTCP
	}
	if p.scopeUnix {
		attr.Scoped |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	if p.scopeSignal {
		attr.Scoped |= unix.LANDLOCK_SCOPE_SIGNAL
	}
	// An older kernel takes a struct longer than the one it knows, as long as the fields
	// it does not know are zero.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("creating a Landlock ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	if p.paths {
		for _, r := range rules {
			if err := addPath(int(fd), r, attr.Access_fs); err != nil {
				return err
			}
		}
	}
	if err := dropPtrace(); err != nil {
		return err
	}
	// Needed to restrict oneself without CAP_SYS_ADMIN; it also keeps set-user-ID programs
	// from gaining privileges the domain could not hold them to.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if p.network {
		if err := installNetworkFilter(); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("entering the Landlock domain: %w", errno)
	}
	return nil
}

// dropPtrace takes CAP_SYS_PTRACE from the calling thread, and so from the commands it
// starts, set-user-ID programs included. A launcher's forking thread shares its domain
// with the commands, and Landlock lets a process trace another in its own domain; with
// the launcher undumpable, a command cannot then reach into it through that thread.
func dropPtrace() error {
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0); err != nil && err != unix.EPERM {
		return fmt.Errorf("dropping CAP_SYS_PTRACE: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	const ptrace = 1 << unix.CAP_SYS_PTRACE
	if (data[0].Effective|data[0].Permitted|data[0].Inheritable)&ptrace == 0 {
		return nil
	}
	data[0].Effective &^= ptrace
	data[0].Permitted &^= ptrace
	data[0].Inheritable &^= ptrace
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("dropping CAP_SYS_PTRACE: %w", err)
	}
	return nil
}

// addPath adds a rule for r to the ruleset fd. A path that no longer exists is skipped.
func addPath(fd int, r rule, handled uint64) error {
	pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s for the Landlock ruleset: %w", r.path, err)
	}
	defer unix.Close(pfd)
	allowed := r.access.rights(handled)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("opening %s for the Landlock ruleset: %w", r.path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		allowed &= fsFile
	}
	if allowed == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: allowed, Parent_fd: int32(pfd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("adding %s to the Landlock ruleset: %w", r.path, errno)
	}
	return nil
}
