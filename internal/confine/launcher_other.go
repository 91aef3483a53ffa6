//go:build !linux

package confine

// IsLauncher reports false: on this system there are no launchers.
func IsLauncher() bool { return false }

// RunLauncher does nothing and returns 2: on this system there are no launchers.
func RunLauncher() int { return 2 }
