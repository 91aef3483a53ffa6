package loopback

import (
	"net"
	"strings"
)

// Host reports whether h, a host name or an IP address (an IPv6 one bracketed or not), is
// the loopback: "localhost" in any case, an address in 127.0.0.0/8, or ::1.
func Host(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// HostPort reports whether the host part of hostport (as in a Host header: host,
// host:port or [v6]:port) is the loopback ([Host]).
func HostPort(hostport string) bool {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return Host(h)
	}
	return Host(hostport)
}
