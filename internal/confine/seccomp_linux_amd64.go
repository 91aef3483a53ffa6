package confine

import "golang.org/x/sys/unix"

// abis are amd64's system call ABIs: x86-64 with x32 (the same audit architecture, with
// bit 30 set in the number), and i386 through int 0x80.
var abis = []sysABI{
	{arch: unix.AUDIT_ARCH_X86_64, nrMask: 0x40000000, socket: unix.SYS_SOCKET, ioUring: unix.SYS_IO_URING_SETUP},
	{arch: unix.AUDIT_ARCH_I386, socket: 359, socketcall: 102, ioUring: 425},
}
