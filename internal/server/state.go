package server

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/tasks"
)

// stateSubdir is the directory of --state-dir that holds what a Boris started again on the
// same state directory (a sandbox resumed after a suspend) knows: the claim /init made,
// and the workspaces of stateless requests with their tasks.
const stateSubdir = "workspaces"

// Bounds of the saved workspaces.
const (
	maxSavedFile = 256 << 10 // one workspace's file; a bigger one is not read
	maxSavedEnv  = 64 << 10  // the variables one workspace changed; past it they are not kept
)

// savedWorkspace is one stateless workspace as a restarted Boris finds it: its cwd, the
// variables its commands set or removed, and its tasks (see [tasks.Past]).
type savedWorkspace struct {
	Key   string            `json:"key"`
	Cwd   string            `json:"cwd"`
	Set   map[string]string `json:"set,omitempty"`
	Unset []string          `json:"unset,omitempty"`
	Tasks []tasks.Past      `json:"tasks,omitempty"`
	Saved time.Time         `json:"saved"`
}

// stateStore keeps the workspaces' files in --state-dir/workspaces, one a workspace,
// written atomically when a call leaves the workspace changed, and at shutdown.
type stateStore struct {
	dir string // "" without a state directory: nothing is kept

	mu      sync.Mutex
	loaded  map[string]*savedWorkspace // by workspace key, until the workspace opens again
	written map[string][]byte          // by file: what was last written, to skip rewrites
}

// loadState reads what an earlier Boris kept, at most max workspaces, the most recently
// saved; older and unreadable files are removed.
func loadState(stateDir string, max int, log interface{ Warn(string, ...any) }) *stateStore {
	st := &stateStore{loaded: map[string]*savedWorkspace{}, written: map[string][]byte{}}
	if stateDir == "" {
		return st
	}
	st.dir = filepath.Join(stateDir, stateSubdir)
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		if !os.IsNotExist(err) {
			log.Warn("cannot read the saved workspaces", "dir", st.dir, "err", err)
		}
		return st
	}
	var all []*savedWorkspace
	files := map[*savedWorkspace]string{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, "ws-") || !strings.HasSuffix(name, ".json") {
			if strings.HasPrefix(name, ".tmp-") {
				_ = os.Remove(filepath.Join(st.dir, name)) // a write cut short
			}
			continue
		}
		path := filepath.Join(st.dir, name)
		var w savedWorkspace
		if b, err := readSmall(path, maxSavedFile); err != nil || json.Unmarshal(b, &w) != nil || w.Key == "" {
			log.Warn("removing an unreadable saved workspace", "file", path)
			_ = os.Remove(path)
			continue
		}
		all = append(all, &w)
		files[&w] = path
	}
	slices.SortFunc(all, func(a, b *savedWorkspace) int { return b.Saved.Compare(a.Saved) })
	for i, w := range all {
		if i >= max {
			_ = os.Remove(files[w])
			continue
		}
		st.loaded[w.Key] = w
	}
	return st
}

func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > limit {
		return nil, fs.ErrInvalid
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// restore gives st, a workspace opening under key, what an earlier Boris kept of it, and
// reports whether there was anything.
func (ss *stateStore) restore(key string, st *session.Session) bool {
	ss.mu.Lock()
	w := ss.loaded[key]
	delete(ss.loaded, key)
	ss.mu.Unlock()
	if w == nil {
		return false
	}
	if w.Cwd != "" {
		st.SetCwd(w.Cwd)
	}
	if len(w.Set) > 0 || len(w.Unset) > 0 {
		before := st.Env()
		after := make([]string, 0, len(before)+len(w.Set))
		for _, kv := range before {
			k, _, _ := strings.Cut(kv, "=")
			if _, set := w.Set[k]; !set && !slices.Contains(w.Unset, k) {
				after = append(after, kv)
			}
		}
		for k, v := range w.Set {
			after = append(after, k+"="+v)
		}
		st.ApplyEnv(before, after)
	}
	st.Tasks.Restore(w.Tasks)
	return true
}

// save writes what a restarted Boris should know of the workspace key with state st,
// whose commands started with the environment base, unless it is what was last written.
func (ss *stateStore) save(key string, st *session.Session, base []string, sync bool) error {
	if ss.dir == "" {
		return nil
	}
	w := savedWorkspace{Key: key, Cwd: st.Cwd(), Tasks: st.Tasks.Record()}
	w.Set, w.Unset = envChanges(base, st.Env())
	size := 0
	for k, v := range w.Set {
		size += len(k) + len(v)
	}
	if size > maxSavedEnv {
		w.Set, w.Unset = nil, nil
	}
	body, err := json.Marshal(w)
	if err != nil {
		return err
	}
	path := filepath.Join(ss.dir, st.ID+".json")
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if bytes.Equal(ss.written[path], body) && !sync {
		return nil
	}
	w.Saved = time.Now()
	stamped, _ := json.Marshal(w)
	if err := writeFileAtomic(path, stamped, sync); err != nil {
		return err
	}
	ss.written[path] = body
	return nil
}

// forget removes the file of the workspace with state st, closed for good (idle, or to
// make room).
func (ss *stateStore) forget(st *session.Session) {
	if ss.dir == "" {
		return
	}
	path := filepath.Join(ss.dir, st.ID+".json")
	ss.mu.Lock()
	delete(ss.written, path)
	ss.mu.Unlock()
	_ = os.Remove(path)
}

// envChanges returns the variables of env that base lacks or has with another value, and
// those of base that env lacks.
func envChanges(base, env []string) (set map[string]string, unset []string) {
	b := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		b[k] = v
	}
	seen := map[string]bool{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		seen[k] = true
		if old, ok := b[k]; !ok || old != v {
			if set == nil {
				set = map[string]string{}
			}
			set[k] = v
		}
	}
	for k := range b {
		if !seen[k] {
			unset = append(unset, k)
		}
	}
	slices.Sort(unset)
	return set, unset
}

// restoreWorkspace gives a workspace that opens what an earlier Boris kept of it.
func (s *Server) restoreWorkspace(key string, st *session.Session) {
	if s.state.restore(key, st) {
		s.log.Info("workspace restored from the state directory", "workspace", st.ID, "cwd", st.Cwd())
	}
}

// saveWorkspace keeps what a restarted Boris should know of a workspace after a call in it.
func (s *Server) saveWorkspace(key string, st *session.Session) {
	if s.closing.Load() {
		return // Close saves every workspace once, before stopping their commands
	}
	if err := s.state.save(key, st, s.commandEnviron(), false); err != nil {
		s.log.Warn("cannot save the workspace for a restart", "workspace", st.ID, "err", err)
	}
}
