package confine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's network rules cover TCP sockets alone: a socket of another stream protocol
// (MPTCP, which falls back to TCP with any peer; SMC, which does too; SCTP) or a raw or
// packet socket connects and listens past them. So with --confine-network the launcher's
// forking thread also installs a seccomp filter, inherited by every command, that refuses
// to create any socket but these, with EACCES as Landlock answers:
//
//   - AF_UNIX and AF_NETLINK sockets (local; Landlock scopes abstract UNIX sockets, and
//     named ones are files);
//   - AF_INET and AF_INET6 stream sockets of TCP (protocol 0 or IPPROTO_TCP), which
//     Landlock then holds to its rules, and datagram sockets of UDP (0 or IPPROTO_UDP).
//
// It also refuses io_uring_setup (EPERM, as a kernel that disables io_uring answers), since
// io_uring creates sockets without the socket system call.

// sysABI is how one system call ABI of this architecture names what the filter checks.
type sysABI struct {
	arch       uint32 // AUDIT_ARCH_*
	nrMask     uint32 // bits of the system call number to ignore (x32's marker)
	socket     uint32
	socketcall uint32 // 0 where there is none; the filter refuses its SYS_SOCKET call
	ioUring    uint32 // io_uring_setup; io_uring_enter and io_uring_register follow it
}

// Offsets in struct seccomp_data.
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArgs = 16 // 64-bit arguments; their low 32 bits come first on little-endian machines
)

// canFilterNetwork reports whether [networkFilter] has a program for this architecture.
func canFilterNetwork() bool { return len(abis) > 0 }

// networkFilter returns the seccomp program described above.
func networkFilter() ([]unix.SockFilter, error) {
	if len(abis) == 0 {
		return nil, errNoSeccomp
	}
	var a bpf
	a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArch)
	for i, abi := range abis {
		a.jeq(abi.arch, fmt.Sprint("abi", i), "")
	}
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)) // no other ABI exists on this architecture
	for i, abi := range abis {
		a.label(fmt.Sprint("abi", i))
		a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompNr)
		if abi.nrMask != 0 {
			a.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, ^abi.nrMask)
		}
		a.jeq(abi.socket, "socket", "")
		if abi.socketcall != 0 {
			a.jeq(abi.socketcall, fmt.Sprint("socketcall", i), "")
		}
		a.jump(unix.BPF_JGE, abi.ioUring, "", "allow")
		a.jump(unix.BPF_JGT, abi.ioUring+2, "allow", "io_uring")
		if abi.socketcall != 0 {
			a.label(fmt.Sprint("socketcall", i))
			a.arg(0)
			a.jeq(1 /* SYS_SOCKET */, "deny", "allow")
		}
	}
	a.label("socket")
	a.arg(0)
	a.jeq(unix.AF_UNIX, "allow", "")
	a.jeq(unix.AF_NETLINK, "allow", "")
	a.jeq(unix.AF_INET, "inet", "")
	a.jeq(unix.AF_INET6, "inet", "deny")
	a.label("inet")
	a.arg(1)
	a.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xf) // the type without SOCK_NONBLOCK and SOCK_CLOEXEC
	a.jeq(unix.SOCK_STREAM, "stream", "")
	a.jeq(unix.SOCK_DGRAM, "dgram", "deny")
	a.label("stream")
	a.arg(2)
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_TCP, "allow", "deny")
	a.label("dgram")
	a.arg(2)
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_UDP, "allow", "deny")
	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("deny")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	a.label("io_uring")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	return a.assemble()
}

// installNetworkFilter puts the calling thread, which has no_new_privs set, under
// [networkFilter]'s program, and with it every process it starts from now on.
func installNetworkFilter() error {
	prog, err := networkFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Without SECCOMP_FILTER_FLAG_TSYNC: this thread alone, not the launcher's others.
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("installing the seccomp filter that keeps commands to TCP and UDP: %w", errno)
	}
	return nil
}

// bpf assembles a classic BPF program whose jumps name labels; "" is the next instruction.
type bpf struct {
	prog   []unix.SockFilter
	jumps  []bpfJump
	labels map[string]int
}

type bpfJump struct {
	at     int
	jt, jf string
}

func (a *bpf) stmt(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *bpf) ret(k uint32) { a.stmt(unix.BPF_RET|unix.BPF_K, k) }

// arg loads the low 32 bits of system call argument i.
func (a *bpf) arg(i uint32) {
	a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArgs+8*i)
}

func (a *bpf) jeq(k uint32, jt, jf string) { a.jump(unix.BPF_JEQ, k, jt, jf) }

func (a *bpf) jump(op uint16, k uint32, jt, jf string) {
	a.jumps = append(a.jumps, bpfJump{len(a.prog), jt, jf})
	a.stmt(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (a *bpf) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

func (a *bpf) assemble() ([]unix.SockFilter, error) {
	for _, j := range a.jumps {
		for _, t := range []struct {
			name string
			off  *uint8
		}{{j.jt, &a.prog[j.at].Jt}, {j.jf, &a.prog[j.at].Jf}} {
			if t.name == "" {
				continue
			}
			to, ok := a.labels[t.name]
			if !ok || to <= j.at || to-j.at-1 > 255 {
				return nil, fmt.Errorf("seccomp program: bad jump to %q", t.name)
			}
			*t.off = uint8(to - j.at - 1)
		}
	}
	return a.prog, nil
}
