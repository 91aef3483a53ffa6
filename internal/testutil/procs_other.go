//go:build !linux

package testutil

import "testing"

// ChainScript is for Linux only, where commands can be moved between cgroups.
func ChainScript(cgroupProcs, tag string, n int) string { return "" }

// WithEnv finds nothing where /proc is missing.
func WithEnv(testing.TB, string) []int { return nil }

// Cgroup2Root returns "": there are no cgroups here.
func Cgroup2Root() string { return "" }

// PidsCgroup returns "": there are no cgroups here.
func PidsCgroup(testing.TB, int) string { return "" }
