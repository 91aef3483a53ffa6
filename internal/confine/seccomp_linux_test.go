package confine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeEnv makes the test binary a network probe: "FAMILY TYPE PROTOCOL OP PORT", where OP
// is connect (to loopback PORT), listen (bind loopback port 0 and listen), socket (create
// it only) or io_uring (set up a ring; the rest is ignored).
const probeEnv = "BORIS_TEST_NETPROBE"

// Exit statuses of the probe.
const (
	probeOK           = 0
	probeSocketDenied = 10 // socket() refused with EACCES
	probeSocketFailed = 11 // socket() failed otherwise
	probeUseDenied    = 20 // connect, bind or listen refused with EACCES
	probeUseFailed    = 21
	probeRingDenied   = 30 // io_uring_setup refused with EPERM
	probeRingFailed   = 31
)

func init() {
	if spec, ok := syscall.Getenv(probeEnv); ok {
		os.Exit(probe(strings.Fields(spec)))
	}
}

func probe(spec []string) int {
	n := make([]int, len(spec))
	for i, s := range spec {
		n[i], _ = strconv.Atoi(s)
	}
	if spec[3] == "io_uring" {
		var params [120]byte // struct io_uring_params
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		switch {
		case errno == unix.EPERM:
			return probeRingDenied
		case errno != 0:
			fmt.Fprintln(os.Stderr, "io_uring_setup:", errno)
			return probeRingFailed
		}
		unix.Close(int(fd))
		return probeOK
	}
	fd, err := unix.Socket(n[0], n[1], n[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "socket:", err)
		if errors.Is(err, unix.EACCES) {
			return probeSocketDenied
		}
		return probeSocketFailed
	}
	var sa4 = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: n[4]}
	var sa6 = &unix.SockaddrInet6{Addr: [16]byte{15: 1}, Port: n[4]}
	var sa unix.Sockaddr = sa4
	if n[0] == unix.AF_INET6 {
		sa = sa6
	}
	switch spec[3] {
	case "connect":
		err = unix.Connect(fd, sa)
	case "listen":
		sa4.Port, sa6.Port = 0, 0
		if err = unix.Bind(fd, sa); err == nil && n[1]&0xf == unix.SOCK_STREAM {
			err = unix.Listen(fd, 1)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, spec[3]+":", err)
		if errors.Is(err, unix.EACCES) {
			return probeUseDenied
		}
		return probeUseFailed
	}
	return probeOK
}

// probeUnconfined runs the probe as this process's plain child.
func probeUnconfined(t *testing.T, spec string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), probeEnv+"="+spec)
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// probeConfined runs the probe through d.
func probeConfined(t *testing.T, d *Domain, spec string) int {
	t.Helper()
	var status syscall.WaitStatus
	pid, err := d.ForkExec(os.Args[0], []string{os.Args[0]}, &syscall.ProcAttr{Env: []string{probeEnv + "=" + spec}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.Wait4(pid, &status, 0, nil); err != nil {
		t.Fatal(err)
	}
	return status.ExitStatus()
}

// listen listens on network's loopback address in this process, as Boris does on its
// own port, and returns the port, or 0 where that network is missing.
func listen(t *testing.T, network, addr string) int {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return 0
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestConfineNetworkProtocols: with the network confined, a command reaches no TCP port,
// by TCP or by MPTCP (which Landlock's TCP rules do not cover), over IPv4 and IPv6,
// connecting (to a port of this very process, as to Boris's own) or listening; nor opens
// sockets of other protocols that reach the network past Landlock, nor an io_uring, which
// makes sockets without socket(); UDP and local sockets still work.
func TestConfineNetworkProtocols(t *testing.T) {
	if KernelABI() < 4 {
		t.Skip("Landlock ABI 4 is needed")
	}
	p, err := New(Options{Mode: Auto, Network: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Domain(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ports := map[int]int{unix.AF_INET: listen(t, "tcp4", "127.0.0.1:0"), unix.AF_INET6: listen(t, "tcp6", "[::1]:0")}
	type probeCase struct {
		name, spec string
		want       int
	}
	var cases []probeCase
	for _, fam := range []struct {
		name string
		af   int
	}{{"IPv4", unix.AF_INET}, {"IPv6", unix.AF_INET6}} {
		if ports[fam.af] == 0 {
			t.Logf("no %s loopback here: skipping its cases", fam.name)
			continue
		}
		for _, proto := range []struct {
			name string
			n    int
			want int
		}{{"TCP", unix.IPPROTO_TCP, probeUseDenied}, {"TCP (protocol 0)", 0, probeUseDenied}, {"MPTCP", unix.IPPROTO_MPTCP, probeSocketDenied}} {
			for _, op := range []string{"connect", "listen"} {
				spec := fmt.Sprintf("%d %d %d %s %d", fam.af, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto.n, op, ports[fam.af])
				cases = append(cases, probeCase{fam.name + " " + proto.name + " " + op, spec, proto.want})
			}
		}
	}
	cases = append(cases,
		probeCase{"SMC", fmt.Sprintf("%d %d 0 socket 0", unix.AF_SMC, unix.SOCK_STREAM), probeSocketDenied},
		probeCase{"SMC over IPv4", fmt.Sprintf("%d %d 256 socket 0", unix.AF_INET, unix.SOCK_STREAM), probeSocketDenied},
		probeCase{"SCTP", fmt.Sprintf("%d %d %d socket 0", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP), probeSocketDenied},
		probeCase{"SCTP seqpacket", fmt.Sprintf("%d %d %d socket 0", unix.AF_INET, unix.SOCK_SEQPACKET, unix.IPPROTO_SCTP), probeSocketDenied},
		probeCase{"raw IPv4", fmt.Sprintf("%d %d %d socket 0", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_TCP), probeSocketDenied},
		probeCase{"ping", fmt.Sprintf("%d %d %d socket 0", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP), probeSocketDenied},
		probeCase{"packet", fmt.Sprintf("%d %d 0 socket 0", unix.AF_PACKET, unix.SOCK_RAW), probeSocketDenied},
		probeCase{"vsock", fmt.Sprintf("%d %d 0 socket 0", unix.AF_VSOCK, unix.SOCK_STREAM), probeSocketDenied},
		probeCase{"io_uring", "0 0 0 io_uring 0", probeRingDenied},
		probeCase{"UDP", fmt.Sprintf("%d %d 0 listen 0", unix.AF_INET, unix.SOCK_DGRAM), probeOK},
		probeCase{"UDP by protocol", fmt.Sprintf("%d %d %d listen 0", unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, unix.IPPROTO_UDP), probeOK},
		probeCase{"UNIX", fmt.Sprintf("%d %d 0 socket 0", unix.AF_UNIX, unix.SOCK_STREAM), probeOK},
		probeCase{"netlink", fmt.Sprintf("%d %d 0 socket 0", unix.AF_NETLINK, unix.SOCK_RAW), probeOK},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == probeSocketDenied && strings.Contains(c.name, "MPTCP") {
				// Without the filter, the command would reach the port: check that it can.
				if got := probeUnconfined(t, c.spec); got != probeOK {
					t.Skipf("unconfined, the MPTCP probe %q exits %d: this kernel has no MPTCP to refuse", c.spec, got)
				}
			}
			if got := probeConfined(t, d, c.spec); got != c.want {
				t.Errorf("confined probe %q exits %d, want %d", c.spec, got, c.want)
			}
		})
	}
}
