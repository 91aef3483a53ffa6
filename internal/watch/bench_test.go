package watch_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
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
			cfg := testConfig(b)
			cfg.NoWatch = mode == "off"
			cs, srv := connect(b, cfg)
			h := srv.Watch()
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
