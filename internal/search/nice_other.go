//go:build !linux

package search

// idleThread does nothing where a thread's priority cannot be set on its own: the index
// is built at the process's priority there.
func idleThread() {}
