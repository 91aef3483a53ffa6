package session

import "github.com/mjkoo/boris/internal/files"

// Bounds on what a session remembers of file contents. Forgetting only costs the model a
// less precise message (what changed) or an undo it can no longer make.
const (
	maxChanges      = 64       // undoable edits kept, all files together
	maxChangeBytes  = 16 << 20 // bytes of earlier content they may hold
	maxSnapshotSize = 1 << 20  // a file's content is kept as seen only up to this size
	maxSnapshots    = 8 << 20  // bytes of seen content kept
)

// Change is one edit a session made to a file, kept so that it can be undone.
type Change struct {
	Path    string       // real path
	Old     []byte       // content before the edit
	Existed bool         // false when the edit created the file
	Wrote   files.Digest // digest of the content the edit wrote
}

// edits is a session's bounded memory of file contents: the undoable changes, oldest
// first, and the content of each file as the model last saw it.
type edits struct {
	changes     []Change
	changeBytes int
	snaps       map[string][]byte
	snapOrder   []string
	snapBytes   int
}

// RecordChange remembers c for [Session.LastChange]. The oldest changes are forgotten past
// the session's bounds.
func (s *Session) RecordChange(c Change) {
	if len(c.Old) > maxChangeBytes {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &s.edits
	e.changes = append(e.changes, c)
	e.changeBytes += len(c.Old)
	for len(e.changes) > maxChanges || e.changeBytes > maxChangeBytes {
		e.changeBytes -= len(e.changes[0].Old)
		e.changes[0] = Change{}
		e.changes = e.changes[1:]
	}
}

// LastChange returns the most recent remembered change to path.
func (s *Session) LastChange(path string) (Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.edits.changes) - 1; i >= 0; i-- {
		if c := s.edits.changes[i]; c.Path == path {
			return c, true
		}
	}
	return Change{}, false
}

// DropLastChange forgets the most recent change to path, once it has been undone.
func (s *Session) DropLastChange(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &s.edits
	for i := len(e.changes) - 1; i >= 0; i-- {
		if e.changes[i].Path == path {
			e.changeBytes -= len(e.changes[i].Old)
			e.changes = append(e.changes[:i], e.changes[i+1:]...)
			return
		}
	}
}

// Remember keeps content as the model last saw the file at path, so a later refusal can
// say what changed; content is not copied and must not be modified. Large files are not
// kept, and the oldest snapshots are forgotten past the session's bound.
func (s *Session) Remember(path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &s.edits
	if old, ok := e.snaps[path]; ok {
		e.snapBytes -= len(old)
		delete(e.snaps, path)
		for i, p := range e.snapOrder {
			if p == path {
				e.snapOrder = append(e.snapOrder[:i], e.snapOrder[i+1:]...)
				break
			}
		}
	}
	if len(content) > maxSnapshotSize {
		return
	}
	if e.snaps == nil {
		e.snaps = make(map[string][]byte)
	}
	e.snaps[path] = content
	e.snapOrder = append(e.snapOrder, path)
	e.snapBytes += len(content)
	for e.snapBytes > maxSnapshots && len(e.snapOrder) > 0 {
		oldest := e.snapOrder[0]
		e.snapBytes -= len(e.snaps[oldest])
		delete(e.snaps, oldest)
		e.snapOrder = e.snapOrder[1:]
	}
}

// Remembered returns the content kept by [Session.Remember] for path, or nil.
func (s *Session) Remembered(path string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.edits.snaps[path]
}
