//go:build linux

package pathscope

import (
	"os"
	"strconv"
)

// fdPath reads the path of the open descriptor fd from /proc/self/fd.
func fdPath(fd uintptr) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
}
