package watch_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

// What the live view costs a `bash true` call:
//
//	go test -run '^$' -bench BashTrue -count 6 ./internal/watch | benchstat -col /watch -
//
// off is --no-watch; nobody is the default with no page open (calls are recorded, no
// output is gathered and nothing is encoded); watched has a subscriber reading every event.
func BenchmarkBashTrue(b *testing.B) {
	for _, mode := range []string{"off", "nobody", "watched"} {
		b.Run("watch="+mode, func(b *testing.B) {
			cfg := testConfigB(b)
			cfg.NoWatch = mode == "off"
			cs, h := connectB(b, cfg)
			if mode == "watched" {
				sub := h.Subscribe(0)
				defer sub.Close()
				stop := make(chan struct{})
				defer close(stop)
				go func() {
					for {
						_, wait := sub.Next(256)
						if wait == nil {
							continue
						}
						select {
						case <-wait:
						case <-stop:
							return
						}
					}
				}()
			}
			b.ReportAllocs()
			defer testutil.CPUPerOp(b)()
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
				if err != nil || res.IsError {
					b.Fatal(err, textOf(res))
				}
			}
		})
	}
}

func testConfigB(b *testing.B) config.Config { return testConfig(b) }

func connectB(b *testing.B, cfg config.Config) (*mcp.ClientSession, *watch.Hub) {
	b.Helper()
	srv, err := newServer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(b.Context(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		srv.Close()
	})
	return cs, srv.Watch()
}
