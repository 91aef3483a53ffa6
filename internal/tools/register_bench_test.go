package tools_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/tools"
)

// BenchmarkRegister measures what registering the tools adds to the server's start.
func BenchmarkRegister(b *testing.B) {
	cfg := config.Config{Transport: "stdio", Workdir: b.TempDir(), Timeout: 120 * time.Second, MaxFileSize: 10_000_000,
		RequireViewBeforeEdit: true, MaxBackgroundTasks: 4, Shell: "/bin/bash", Version: "test"}
	for b.Loop() {
		s := mcp.NewServer(&mcp.Implementation{Name: "boris", Version: "test"}, nil)
		tools.Register(s, tools.Deps{Config: &cfg})
	}
}
