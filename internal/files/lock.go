package files

import "sync"

// editLocks serialises the read-modify-write cycle of every edit of one path in this
// process, so that two concurrent edits of a file (from one session or several) cannot
// lose one of them. Files are shared by the whole machine, so the table is per process.
var editLocks = struct {
	mu sync.Mutex
	m  map[string]*pathLock
}{m: make(map[string]*pathLock)}

type pathLock struct {
	mu    sync.Mutex
	users int
}

// lockPath locks path for an edit and returns the function that unlocks it.
func lockPath(path string) (unlock func()) {
	editLocks.mu.Lock()
	l := editLocks.m[path]
	if l == nil {
		l = &pathLock{}
		editLocks.m[path] = l
	}
	l.users++
	editLocks.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		editLocks.mu.Lock()
		if l.users--; l.users == 0 {
			delete(editLocks.m, path)
		}
		editLocks.mu.Unlock()
	}
}
