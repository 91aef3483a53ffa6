package confine

import "golang.org/x/sys/unix"

// abis are arm64's system call ABIs: AArch64, and 32-bit ARM where the kernel runs it.
var abis = []sysABI{
	{arch: unix.AUDIT_ARCH_AARCH64, socket: unix.SYS_SOCKET, ioUring: unix.SYS_IO_URING_SETUP},
	{arch: unix.AUDIT_ARCH_ARM, socket: 281, ioUring: 425},
}
