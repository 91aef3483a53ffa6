package tools_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/tools"
)

// BenchmarkRegister measures what registering the tools adds to the server's start.
func BenchmarkRegister(b *testing.B) {
	cfg := testConfig(b)
	for b.Loop() {
		s := mcp.NewServer(&mcp.Implementation{Name: "boris", Version: "test"}, nil)
		tools.Register(s, tools.Deps{Config: &cfg})
	}
}
