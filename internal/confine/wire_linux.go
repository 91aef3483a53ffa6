package confine

import (
	"encoding/binary"
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Boris and a session's launcher talk over a SOCK_SEQPACKET socket pair. A message is one
// or more packets: each begins with a byte saying whether more of the message follows, so
// that a large environment never meets the limit on one packet's size. Descriptors travel
// with a message's first packet. Numbers are varints, strings and lists are prefixed with
// their length.

const (
	packetMax = 32 << 10 // bytes of a message in one packet
	maxFDs    = 64       // descriptors in one message
)

// errEOF is the end of the socket: the other side has closed it, or has ended.
var errEOF = errors.New("end of the launcher's socket")

// enc builds a message.
type enc struct{ b []byte }

func (e *enc) int(v int) { e.b = binary.AppendVarint(e.b, int64(v)) }

func (e *enc) bool(v bool) {
	if v {
		e.int(1)
	} else {
		e.int(0)
	}
}

func (e *enc) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *enc) strs(ss []string) {
	e.int(len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

// dec reads a message; the first error sticks and makes every later read return zero.
type dec struct {
	b   []byte
	err error
}

var errShort = errors.New("malformed message from the launcher's socket")

func (d *dec) int() int {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *dec) bool() bool { return d.int() != 0 }

func (d *dec) str() string {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || uint64(len(d.b)-k) < n {
		d.err = errShort
		d.b = nil
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}

func (d *dec) strs() []string {
	n := d.int()
	if n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.str()
	}
	return ss
}

// send writes msg, with fds, as packets on the socket fd. A zero deadline waits as long as
// it takes.
func send(fd int, msg []byte, fds []int, deadline time.Time) error {
	for first := true; first || len(msg) > 0; first = false {
		n := min(len(msg), packetMax)
		more := byte(0)
		if n < len(msg) {
			more = 1
		}
		packet := append([]byte{more}, msg[:n]...)
		var oob []byte
		if first && len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		for {
			err := unix.Sendmsg(fd, packet, oob, nil, unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
			if err == nil {
				break
			}
			switch err {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				if err := waitFD(fd, unix.POLLOUT, deadline); err != nil {
					return err
				}
				continue
			case unix.EPIPE, unix.ECONNRESET:
				return errEOF
			}
			return err
		}
		msg = msg[n:]
	}
	return nil
}

// recv reads a message from the socket fd, with the descriptors that came with it (closed
// on exec). A zero deadline waits as long as it takes.
func recv(fd int, deadline time.Time) (msg []byte, fds []int, err error) {
	buf := make([]byte, packetMax+1)
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	for first := true; ; first = false {
		n, more, got, err := recvPacket(fd, buf, oob, deadline)
		if first {
			fds = got
		} else {
			closeAll(got)
		}
		if err != nil {
			closeAll(fds)
			return nil, nil, err
		}
		msg = append(msg, buf[1:n]...)
		if !more {
			return msg, fds, nil
		}
	}
}

// recvPacket reads one packet into buf, and the descriptors that came with it.
func recvPacket(fd int, buf, oob []byte, deadline time.Time) (n int, more bool, fds []int, err error) {
	for {
		var oobn, flags int
		n, oobn, flags, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
		if err == unix.EAGAIN {
			if err = waitFD(fd, unix.POLLIN, deadline); err == nil {
				continue
			}
		}
		if err == unix.EINTR {
			continue
		}
		if err == nil && oobn > 0 {
			fds, err = parseRights(oob[:oobn])
		}
		switch {
		case err == unix.ECONNRESET:
			err = errEOF
		case err == nil && n == 0:
			err = errEOF
		case err == nil && flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
			err = errShort
		}
		if err != nil {
			closeAll(fds)
			return 0, false, nil, err
		}
		return n, buf[0] != 0, fds, nil
	}
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeAll(fds)
			return nil, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// waitFD waits until fd is ready for events, or the deadline (if not zero) passes.
func waitFD(fd int, events int16, deadline time.Time) error {
	for {
		timeout := -1
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return errTimeout
			}
			timeout = int((left + time.Millisecond - 1) / time.Millisecond)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR || err == nil && n == 0 {
			continue
		}
		return err
	}
}

var errTimeout = errors.New("the launcher did not answer in time")

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// errnoOf returns the errno err carries, or 0.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return 0
}
