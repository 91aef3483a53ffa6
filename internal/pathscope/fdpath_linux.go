package pathscope

import (
	"os"
	"strconv"
)

// fdPathExact says that [FdPath] gives a path exactly as the resolver spells it, so that
// what was opened is checked even when there is no rule to check it against.
const fdPathExact = true

// fdPath reads the path of the open descriptor fd from /proc/self/fd.
func fdPath(fd uintptr) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
}
