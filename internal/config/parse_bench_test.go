package config_test

import (
	"io"
	"testing"

	"github.com/mjkoo/boris/internal/config"
)

// BenchmarkParse measures what reading the command line adds to the server's start.
func BenchmarkParse(b *testing.B) {
	getenv := func(string) string { return "" }
	for b.Loop() {
		if _, err := config.Parse([]string{"--transport", "stdio"}, getenv, "test", io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
