//go:build !linux

package search

// watcher would report changes under a tree; without inotify there is none, and every
// search walks its tree.
type watcher struct{}

func newWatcher(string) (*watcher, error)        { return nil, errNoEvents }
func (*watcher) add(string) (int, error)         { return -1, errNoEvents }
func (*watcher) remove(int)                      {}
func (*watcher) wait() bool                      { return false }
func (*watcher) stop()                           {}
func (*watcher) close()                          {}
func (*watcher) drain(func(ev event)) error      { return nil }
func openBeneath(int, string, int) (int, error)  { return -1, errNoEvents }
func openBeneathC(int, []byte, int) (int, error) { return -1, errNoEvents }
