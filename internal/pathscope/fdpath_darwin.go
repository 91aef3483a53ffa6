package pathscope

import (
	"bytes"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pathBufs holds buffers for F_GETPATH. They come from the heap (a pool holds them as
// interfaces), where the garbage collector never moves them, so the address given to
// fcntl stays valid for the whole call.
var pathBufs = sync.Pool{New: func() any { return new([unix.PathMax]byte) }}

// fdPathExact is false: F_GETPATH gives the name in the case a case-insensitive volume
// stores it, which may not be how the path was spelled, so an open with no rule to check
// it against is not checked.
const fdPathExact = false

// fdPath asks the kernel for the path of the open descriptor fd (fcntl F_GETPATH).
func fdPath(fd uintptr) (string, error) {
	buf := pathBufs.Get().(*[unix.PathMax]byte)
	defer pathBufs.Put(buf)
	if _, err := unix.FcntlInt(fd, unix.F_GETPATH, int(uintptr(unsafe.Pointer(buf)))); err != nil {
		return "", &os.PathError{Op: "fcntl F_GETPATH", Path: "fd", Err: err}
	}
	n := bytes.IndexByte(buf[:], 0)
	if n < 0 {
		n = len(buf)
	}
	return string(buf[:n]), nil
}
