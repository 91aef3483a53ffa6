//go:build !linux

package checkpoint

// writeUnnamed is Linux's O_TMPFILE; elsewhere contents are written to a temporary name.
func writeUnnamed(dir, name string, data []byte) (ok bool, err error) { return false, nil }
