//go:build !linux

package checkpoint

import "errors"

// watcher is Linux's inotify; elsewhere every capture walks the tree.
type watcher struct{}

func newWatcher() (*watcher, error) { return nil, errors.New("file events are read on Linux only") }

func (w *watcher) add(abs, rel string) error        { return nil }
func (w *watcher) removeUnder(rel string)           {}
func (w *watcher) drain(dirty map[string]bool) bool { return true }
func (w *watcher) close()                           {}
