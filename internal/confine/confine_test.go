package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/testutil"
)

func TestNewRefusesWhatTheKernelCannotDo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name    string
		o       Options
		wantErr string // "" for no error
		paths   bool
		network bool
		why     string
	}{
		{"on without Landlock", Options{Mode: On, Dirs: []string{dir}, MaxABI: -1}, "--confine-bash=on: commands cannot be confined", false, false, ""},
		{"on without allowed directories", Options{Mode: On, MaxABI: 7}, "give at least one --allow-dir", false, false, ""},
		{"network on ABI 3", Options{Mode: Auto, Dirs: []string{dir}, Network: true, MaxABI: 3}, "--confine-network: this kernel cannot forbid TCP", false, false, ""},
		{"network with confinement off", Options{Mode: Off, Network: true}, "--confine-network needs --confine-bash auto or on", false, false, ""},
		{"bad mode", Options{Mode: "sometimes"}, `--confine-bash "sometimes"`, false, false, ""},
		{"auto without Landlock runs unconfined", Options{Mode: Auto, Dirs: []string{dir}, MaxABI: -1}, "", false, false, "capped at ABI 0"},
		{"auto without allowed directories", Options{Mode: Auto, MaxABI: 1}, "", false, false, "no --allow-dir"},
		{"empty mode is auto", Options{Dirs: []string{dir}, MaxABI: 1}, "", true, false, ""},
		{"off", Options{Mode: Off, Dirs: []string{dir}, MaxABI: 1}, "", false, false, "--confine-bash=off"},
		{"network alone", Options{Mode: Auto, Network: true, MaxABI: 4}, "", false, true, "no --allow-dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.o.MaxABI > KernelABI() {
				t.Skipf("needs Landlock ABI %d; the kernel has %d", tt.o.MaxABI, KernelABI())
			}
			p, err := New(tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%+v) error = %v, want one containing %q", tt.o, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%+v): %v", tt.o, err)
			}
			if p.Paths() != tt.paths || p.Network() != tt.network || !strings.Contains(p.Why(), tt.why) {
				t.Errorf("New(%+v) = paths %v, network %v, why %q; want %v, %v, %q", tt.o, p.Paths(), p.Network(), p.Why(), tt.paths, tt.network, tt.why)
			}
		})
	}
}

func TestPolicyRules(t *testing.T) {
	t.Parallel()
	if KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	a, extra, ro := t.TempDir(), t.TempDir(), t.TempDir()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o644)
	// A toolchain installed outside the system directories, found on PATH.
	node := filepath.Join(t.TempDir(), "node-v1")
	os.MkdirAll(filepath.Join(node, "bin"), 0o755)
	os.WriteFile(filepath.Join(node, "bin", "node"), []byte("#!/bin/sh\n"), 0o755)
	env := map[string]string{"HOME": home, "PATH": filepath.Join(node, "bin") + ":/usr/bin"}
	p, err := New(Options{Mode: Auto, Dirs: []string{a}, Write: []string{extra}, Read: []string{ro}, MaxABI: 0, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{a, extra} {
		if !slices.Contains(p.Writable(), want) {
			t.Errorf("Writable() = %q, want %s in it", p.Writable(), want)
		}
	}
	for _, want := range []string{"/usr", "/etc", "/proc", ro, node, filepath.Join(home, ".gitconfig")} {
		if !slices.Contains(p.Readable(), want) {
			t.Errorf("Readable() = %q, want %s in it", p.Readable(), want)
		}
	}
	if slices.Contains(p.Readable(), "/") || slices.Contains(p.Readable(), "/tmp") || slices.Contains(p.Readable(), home) {
		t.Errorf("Readable() = %q, which reaches beyond what it should", p.Readable())
	}
	if got := p.Devices(); !slices.Contains(got, "/dev/null") || slices.Contains(got, "/dev/tty") {
		t.Errorf("Devices() = %q, want /dev/null and not /dev/tty", got)
	}
}
