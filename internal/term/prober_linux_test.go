package term

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestProberSeesReadAgain: a program asleep reading its terminal is seen so, the probe
// before typing at it tells, once it has answered, that it ran since; a closed prober
// says Unknown.
func TestProberSeesReadAgain(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("cat")
	master, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = master.Close() })
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProber(master, "/dev/pts/"+strconv.Itoa(int(n)), func() []int { return []int{cmd.Process.Pid} })
	reading := func() Probe {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if got := p.Look(); got.Reading == Reading {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatal("cat never seen reading its terminal")
			}
			time.Sleep(time.Millisecond) // polling the kernel's view: nothing to wait on
		}
	}
	for i := range 3 {
		reading()
		before := p.Before()
		if again := reading(); again.RanSince(before) {
			t.Fatalf("round %d: cat counts as having run since a probe, with nothing typed", i)
		}
		if _, err := master.WriteString("x\n"); err != nil {
			t.Fatal(err)
		}
		readUntil(t, master, "x\r\nx\r\n")
		if after := reading(); !after.RanSince(before) {
			t.Fatalf("round %d: cat answered, yet counts as not having run since it was typed at (%v, then %v)", i, before.Runs, after.Runs)
		}
	}
	p.Close()
	if got := p.Look(); got.Reading != Unknown {
		t.Errorf("closed prober says %v, want Unknown", got.Reading)
	}
}

func readUntil(t *testing.T, f *os.File, want string) {
	t.Helper()
	var got []byte
	buf := make([]byte, 256)
	for !bytes.Contains(got, []byte(want)) {
		n, err := f.Read(buf)
		if err != nil {
			t.Fatalf("reading the terminal: %v (so far %q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
}
