// Command minimal is the yardstick for bench/compare: an MCP server built on the Go SDK
// with nothing but the cheapest version of Boris's bash, view and str_replace tools, over
// STDIO or (with -http ADDR) streamable HTTP. It is not part of Boris.
package main

import (
	"bytes"
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bashArgs struct {
	Command string `json:"command"`
}

type viewArgs struct {
	Path string `json:"path"`
}

type replaceArgs struct {
	Path   string `json:"path"`
	OldStr string `json:"old_str"`
	NewStr string `json:"new_str"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func fail(err error) (*mcp.CallToolResult, any, error) {
	r := text(err.Error())
	r.IsError = true
	return r, nil, nil
}

// writeSynced replaces path with data as a crash-safe editor must at the least: a
// temporary file in the same directory, its data synced to the disk, renamed over path.
func writeSynced(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".minimal-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func newServer(synced bool) *mcp.Server {
	write := func(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }
	if synced {
		write = writeSynced
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "minimal", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "bash", Description: "Run a command."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a bashArgs) (*mcp.CallToolResult, any, error) {
			out, err := exec.CommandContext(ctx, "/bin/bash", "-c", a.Command).CombinedOutput()
			if err != nil {
				return fail(err)
			}
			return text(string(out)), nil, nil
		})
	// Like Boris's view without a range, it shows the first 2000 lines of the file.
	mcp.AddTool(s, &mcp.Tool{Name: "view", Description: "Read a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, a viewArgs) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return fail(err)
			}
			end := 0
			for range 2000 {
				i := bytes.IndexByte(b[end:], '\n')
				if i < 0 {
					end = len(b)
					break
				}
				end += i + 1
			}
			return text(string(b[:end])), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "str_replace", Description: "Replace text in a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, a replaceArgs) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return fail(err)
			}
			if err := write(a.Path, []byte(strings.Replace(string(b), a.OldStr, a.NewStr, 1))); err != nil {
				return fail(err)
			}
			return text("ok"), nil, nil
		})
	return s
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address instead of STDIO")
	synced := flag.Bool("sync", false, "str_replace writes crash-safe: a synced temporary file renamed over the old")
	flag.Parse()
	s := newServer(*synced)
	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
