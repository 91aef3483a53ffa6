package watch

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

// TestStalledWatchersBounded: thousands of watchers that never read hold a bounded number
// of streams and of the server's memory, while events flow; and a watcher that reads is
// still served, in place of one stuck in a write.
func TestStalledWatchersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 3000 connections")
	}
	h := NewHub(Options{})
	srv := serve(t, h, HandlerOptions{})
	addr := srv.Listener.Addr().String()
	before := heap()

	const readers = 3000
	admitted := 0
	for range readers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "GET /watch/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		status := make([]byte, len("HTTP/1.1 200"))
		if _, err := io.ReadFull(c, status); err != nil {
			t.Fatal(err)
		}
		if string(status) == "HTTP/1.1 200" {
			admitted++
		}
		// Nothing more is read from c.
	}
	if admitted > DefaultMaxStreams {
		t.Fatalf("%d of %d stalled watchers hold a stream, want at most %d", admitted, readers, DefaultMaxStreams)
	}

	text := strings.Repeat("output ", 16<<10/7)
	for i := range 2000 {
		h.Publish(Event{Kind: KindOutput, Session: "s", Stream: "stdout", Text: fmt.Sprint(i, text)})
	}
	// A reader is let in once a stalled stream has been stuck writing those events for a
	// second: until then it is told to retry.
	deadline := time.Now().Add(testutil.Within)
	for {
		res, err := http.Get(srv.URL + "/watch/events")
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == http.StatusOK {
			b := make([]byte, 1024)
			if _, err := io.ReadAtLeast(res.Body, b, 64); err != nil || !strings.Contains(string(b), "data: ") {
				t.Errorf("the admitted reader read %q, %v", b, err)
			}
			res.Body.Close()
			break
		}
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a reading watcher was refused (%d) for %v while %d stalled ones held the streams", res.StatusCode, testutil.Within, admitted)
		}
		<-time.After(10 * time.Millisecond) // pacing the retries, not waiting for an event
	}
	grew := heap() - before
	t.Logf("%d stalled watchers, %d of them holding a stream: the heap grew by %.1f MB", readers, admitted, float64(grew)/(1<<20))
	if grew > 64<<20 {
		t.Errorf("the heap grew by %d MB with %d stalled watchers", grew>>20, readers)
	}
}

func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
