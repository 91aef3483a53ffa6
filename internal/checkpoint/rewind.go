package checkpoint

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Action is what a rewind does to one path.
type Action struct {
	Path string
	Now  State // what the path holds now
	To   State // what the rewind puts there
	// Conflict says why the path is refused unless forced: something other than Boris's
	// calls changed it after the checkpoint.
	Conflict string
	// Lost says why the path cannot be put back.
	Lost string
}

// Plan is what a rewind does, or did.
type Plan struct {
	To      string // the checkpoint rewound to
	Actions []Action
	// Rescue is the checkpoint that records the rewind itself, whose id names the state
	// before it: rewinding to it undoes the rewind. Nil for a dry run.
	Rescue *Checkpoint
	Failed []string // paths that could not be written, with why
}

// Conflicts returns the actions refused unless forced.
func (p *Plan) Conflicts() []Action {
	var out []Action
	for _, a := range p.Actions {
		if a.Conflict != "" {
			out = append(out, a)
		}
	}
	return out
}

// ConflictError is a rewind refused because files changed outside Boris's calls.
type ConflictError struct{ Plan *Plan }

func (e *ConflictError) Error() string {
	var names []string
	for _, a := range e.Plan.Conflicts() {
		names = append(names, a.Path+" ("+a.Conflict+")")
	}
	return "changed outside Boris's calls since " + e.Plan.To + ": " + strings.Join(names, ", ")
}

// ErrNoCheckpoint is returned for an id that names no checkpoint.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// Rewind puts the paths changed since checkpoint to (all of them, or those under paths,
// slash-separated relative to the root) back as they were just before its call. A dry
// run only says what it would do. Paths changed by something other than Boris's calls
// since are refused, unless force. The rewind is itself recorded, first, as a checkpoint
// (the plan's Rescue) for info: a kill part-way leaves each file wholly before or after,
// and the next [Open] finishes the rewind.
func (t *Tracker) Rewind(ctx context.Context, to string, paths []string, dryRun, force bool, info CallInfo) (*Plan, error) {
	if err := t.WaitReady(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.off != nil {
		return nil, t.off
	}
	if changes := t.changes(); len(changes) > 0 {
		if _, err := t.record(CallInfo{Call: "changes made between calls"}, changes, false); err != nil {
			return nil, err
		}
	}
	plan, err := t.plan(to, paths)
	if err != nil || dryRun {
		return plan, err
	}
	if len(plan.Conflicts()) > 0 && !force {
		return plan, &ConflictError{Plan: plan}
	}
	var changes []Change
	var acts []Action
	for _, a := range plan.Actions {
		if a.Lost == "" {
			changes = append(changes, Change{Path: a.Path, Before: a.Now, After: a.To})
			acts = append(acts, a)
		}
	}
	if len(changes) == 0 {
		return plan, nil
	}
	info.Call = cmpOr(info.Call, "rewind to "+plan.To)
	rescue, err := t.record(info, changes, true)
	if err != nil {
		return plan, err
	}
	_ = crashPoint("rewind-recorded")
	var after []*node
	plan.Failed, after = t.apply(acts)
	for i, a := range acts {
		switch {
		case a.To.Kind == Absent:
			if _, err := os.Lstat(t.abs(a.Path)); err != nil {
				t.base.del(a.Path)
			}
		case after[i] == nil:
			t.base.del(a.Path)
		default:
			t.base.set(a.Path, after[i])
		}
	}
	rescue.Pending = false
	if err := t.j.write(rescue, true); err != nil {
		return plan, err
	}
	plan.Rescue = rescue
	return plan, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// plan works out a rewind to checkpoint id from the journal and the baseline.
func (t *Tracker) plan(id string, paths []string) (*Plan, error) {
	target, ok := t.get(id)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrNoCheckpoint, id)
	}
	plan := &Plan{To: target.ID}
	want := map[string]State{}
	expect := map[string]State{}
	outside := map[string]string{}
	var order []string
	for _, c := range t.list {
		if c.Seq < target.Seq {
			continue
		}
		for _, ch := range c.Changes {
			if !within(ch.Path, paths) {
				continue
			}
			if _, ok := want[ch.Path]; !ok {
				want[ch.Path] = ch.Before
				order = append(order, ch.Path)
			}
			expect[ch.Path] = ch.After
			if c.Tool == "" && c.Label == "" {
				outside[ch.Path] = c.ID
			}
		}
	}
	slices.Sort(order)
	for _, p := range order {
		var now State
		if n, ok := t.base[p]; ok {
			now = n.st
		}
		w := want[p]
		if w.Same(now) && w.Lost == "" {
			continue
		}
		a := Action{Path: p, Now: now, To: w, Lost: w.Lost}
		if c, ok := outside[p]; ok {
			a.Conflict = "changed outside Boris's calls, in " + c
		} else if !expect[p].Same(now) {
			a.Conflict = "changed since its last checkpoint"
		}
		plan.Actions = append(plan.Actions, a)
	}
	// Whether each content is still in the store, looked at a few at once.
	parallel(len(plan.Actions), func(i int) {
		a := &plan.Actions[i]
		if a.Lost == "" && a.To.Kind == File && !t.store.Has(a.To.Blob) {
			a.Lost = "its content is missing from the store"
		}
	})
	return plan, nil
}

// within reports whether p is one of paths or under one (all paths when there are none).
func within(p string, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, q := range paths {
		q = strings.TrimSuffix(path.Clean(q), "/")
		if q == "." || p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// Rel returns p (absolute, or relative to the root) as a slash-separated path relative to
// the root, or an error if it is outside.
func (t *Tracker) Rel(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.opts.Root, p)
	}
	rel, err := filepath.Rel(t.opts.Root, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the workspace %s", p, t.opts.Root)
	}
	return filepath.ToSlash(rel), nil
}

// apply makes each path hold its action's To: in the way first (deepest first), then what
// is put back: directories level by level, shallowest first, then files and symlinks, a
// few at once. Each file is written whole before it gets the path's name, so it is at
// every moment wholly old or wholly new. It returns the paths it could not write, with
// why, and what the baseline should now know of each path put back (nil for a path it
// could not stat, which is gone).
func (t *Tracker) apply(acts []Action) (failed []string, after []*node) {
	var mu sync.Mutex
	fail := func(p string, err error) {
		mu.Lock()
		failed = append(failed, p+": "+reason(err))
		mu.Unlock()
	}
	after = make([]*node, len(acts))
	done := func(i int) {
		if info, err := os.Lstat(t.abs(acts[i].Path)); err == nil {
			n := nodeOf(metaOf(info))
			n.st = acts[i].To
			after[i] = n
		}
	}
	// What each path is now, looked at a few at once.
	now := make([]Kind, len(acts))
	parallel(len(acts), func(i int) {
		if info, err := os.Lstat(t.abs(acts[i].Path)); err == nil {
			now[i] = kindOf(info.Mode())
		}
	})
	for i := len(acts) - 1; i >= 0; i-- {
		a, k := acts[i], now[i]
		if k == Absent || a.To.Kind == k {
			continue // nothing in the way, or replaced in place below
		}
		var err error
		if k == Dir {
			err = os.RemoveAll(t.abs(a.Path))
		} else {
			err = os.Remove(t.abs(a.Path))
		}
		if err != nil {
			fail(a.Path, err)
		}
		now[i] = Absent
	}
	var levels [][]int // the directories to make, by depth
	var rest []int
	for i, a := range acts {
		switch a.To.Kind {
		case Dir:
			d := strings.Count(a.Path, "/")
			for len(levels) <= d {
				levels = append(levels, nil)
			}
			levels[d] = append(levels[d], i)
		case Absent:
		default:
			rest = append(rest, i)
		}
	}
	for _, level := range levels {
		parallel(len(level), func(j int) {
			i := level[j]
			abs := t.abs(acts[i].Path)
			err := os.Mkdir(abs, 0o700)
			if errors.Is(err, fs.ErrNotExist) {
				err = os.MkdirAll(abs, 0o700)
			}
			if err == nil || errors.Is(err, fs.ErrExist) {
				err = os.Chmod(abs, acts[i].To.Mode)
			}
			if err != nil {
				fail(acts[i].Path, err)
			}
			done(i)
		})
	}
	parallel(len(rest), func(j int) {
		if j == len(rest)/2 {
			_ = crashPoint("rewind-half-applied")
		}
		i := rest[j]
		a := acts[i]
		var err error
		switch a.To.Kind {
		case File:
			var data []byte
			if data, err = t.store.Get(a.To.Blob); err == nil {
				err = replaceFile(t.abs(a.Path), data, a.To.Mode, now[i] == File)
			}
		case Symlink:
			err = replaceSymlink(t.abs(a.Path), a.To.Link)
		}
		if err != nil {
			fail(a.Path, err)
		}
		done(i)
	})
	return failed, after
}

// parallel calls fn(i) for each i below n, a few at once.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0)*2, 8, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// tempPrefix starts the names of the temporary files a rewind writes beside the files it
// puts back; the next Open removes any a killed rewind left.
const tempPrefix = ".boris-rewind-"

// replaceFile makes path hold data with mode, atomically. A path that does not exist (as
// far as exists says) is written unnamed and linked once whole, where the system allows; one that exists is
// written to a temporary name renamed over it.
func replaceFile(path string, data []byte, mode fs.FileMode, exists bool) error {
	dir := filepath.Dir(path)
	if !exists && mode != 0 { // 0 to writeUnnamed is the umask's mode
		if ok, err := writeUnnamed(dir, path, data, mode, "rewind-file-written"); ok && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.CreateTemp(dir, tempPrefix+"*")
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = crashPoint("rewind-file-written")
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// replaceSymlink makes path a symlink to target, atomically.
func replaceSymlink(path, target string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, tempPrefix+randomName())
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func randomName() string {
	return rand.Text()[:12]
}

// finishRewind completes a rewind a killed process left recorded but perhaps half done:
// it removes the temporary files it may have left and applies it again (putting back a
// path that already holds what it should changes nothing).
func (t *Tracker) finishRewind(c *Checkpoint) error {
	var acts []Action
	dirs := map[string]bool{}
	for _, ch := range c.Changes {
		acts = append(acts, Action{Path: ch.Path, Now: ch.Before, To: ch.After})
		dirs[filepath.Dir(t.abs(ch.Path))] = true
	}
	for d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, tempPrefix+"*")); len(m) > 0 {
			for _, f := range m {
				os.Remove(f)
			}
		}
	}
	if failed, _ := t.apply(acts); len(failed) > 0 {
		t.opts.Logger.Warn("checkpoints: finishing an interrupted rewind", "checkpoint", c.ID, "failed", failed)
	}
	c.Pending = false
	return t.j.write(c, true)
}

// Diff returns what differs between the state checkpoint from names and the state
// checkpoint to names ("" for the workspace now): each path's state at from as Before and
// at to as After.
func (t *Tracker) Diff(ctx context.Context, from, to string) ([]Change, error) {
	if err := t.WaitReady(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.off != nil {
		return nil, t.off
	}
	a, ok := t.get(from)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrNoCheckpoint, from)
	}
	end := t.seq + 1
	if to != "" {
		b, ok := t.get(to)
		if !ok {
			return nil, fmt.Errorf("%w %q", ErrNoCheckpoint, to)
		}
		end = b.Seq
	} else if changes := t.changes(); len(changes) > 0 {
		c, err := t.record(CallInfo{Call: "changes made between calls"}, changes, false)
		if err != nil {
			return nil, err
		}
		end = c.Seq + 1
	}
	lo, hi := a.Seq, end
	if lo > hi {
		lo, hi = hi, lo
	}
	before := map[string]State{}
	after := map[string]State{}
	var order []string
	for _, c := range t.list {
		if c.Seq < lo || c.Seq >= hi {
			continue
		}
		for _, ch := range c.Changes {
			if _, ok := before[ch.Path]; !ok {
				before[ch.Path] = ch.Before
				order = append(order, ch.Path)
			}
			after[ch.Path] = ch.After
		}
	}
	slices.Sort(order)
	var out []Change
	for _, p := range order {
		ch := Change{Path: p, Before: before[p], After: after[p]}
		if a.Seq > end {
			ch.Before, ch.After = ch.After, ch.Before
		}
		if !ch.Before.Same(ch.After) || ch.Before.Lost != ch.After.Lost {
			out = append(out, ch)
		}
	}
	return out, nil
}
