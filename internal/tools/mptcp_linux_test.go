package tools_test

import (
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mptcpEnv makes the test binary connect to 127.0.0.1:PORT over MPTCP, print "connected"
// and exit 0, or print why not and exit 1.
const mptcpEnv = "BORIS_TEST_MPTCP_CONNECT"

func init() {
	port, ok := syscall.Getenv(mptcpEnv)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(port)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
	if err == nil {
		err = unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: n})
	}
	if err != nil {
		fmt.Println("mptcp:", err)
		os.Exit(1)
	}
	fmt.Println("connected")
	os.Exit(0)
}

// TestConfineNetworkOwnPort: with --confine-network, a command cannot reach Boris's own
// HTTP port over MPTCP (which Landlock's TCP rules do not cover), where an unconfined one can.
func TestConfineNetworkOwnPort(t *testing.T) {
	t.Parallel()
	needLandlock(t, 4)
	for _, confined := range []bool{false, true} {
		cfg := testConfig(t)
		cfg.ConfineNetwork = confined
		cs, srv := connect(t, cfg, nil)
		ts := httptest.NewServer(srv.Handler())
		defer ts.Close()
		port := ts.Listener.Addr().(*net.TCPAddr).Port
		command := mptcpEnv + "=" + strconv.Itoa(port) + " " + shellQuote(os.Args[0])
		res, out := bash(t, cs, map[string]any{"command": command})
		switch {
		case !confined && out.Stdout != "connected\n":
			t.Skipf("unconfined, the MPTCP connect to Boris's port failed: %s", textOf(res))
		case confined && (strings.Contains(out.Stdout, "connected") || !strings.Contains(out.Stdout, "permission denied")):
			t.Errorf("with --confine-network, an MPTCP connect to Boris's own port: %s", textOf(res))
		}
	}
}
