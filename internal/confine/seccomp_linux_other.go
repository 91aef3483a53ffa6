//go:build linux && !amd64 && !arm64

package confine

// abis is empty: the filter is written for amd64 and arm64 alone.
var abis []sysABI
