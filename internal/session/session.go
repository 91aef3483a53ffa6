package session

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/pathscope"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
)

// maxSeen bounds the view-tracking table; past it the oldest half is forgotten, which can
// only make a later edit ask for a fresh view.
const maxSeen = 4096

// Options configure a new [Session].
type Options struct {
	ID      string
	Workdir string              // initial cwd, absolute
	Scope   *pathscope.Resolver // decides what file tools may touch
	Env     []string            // environment for commands, already free of Boris's secrets
	Tasks   tasks.Limits
	// Confine, if it confines anything, confines the session's commands (see
	// [Session.Launcher]).
	Confine *confine.Policy
}

// Session is one client's state. It is safe for concurrent use.
type Session struct {
	ID    string
	Scope *pathscope.Resolver
	Tasks *tasks.Manager

	ctx    context.Context // done when the session closes
	cancel context.CancelFunc

	policy  *confine.Policy
	confine confinement

	mu       sync.Mutex
	cwd      string
	env      []string
	seen     map[string]files.Digest
	seenList []string // insertion order, for eviction
	edits    edits    // undo history and seen contents (edits.go)
	spillDir string
	closed   bool
	finished chan struct{} // closed once Close has freed everything
}

// New returns a Session starting in opts.Workdir.
func New(opts Options) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{
		ID:     opts.ID,
		Scope:  opts.Scope,
		Tasks:  tasks.NewManager(opts.Tasks),
		ctx:    ctx,
		cancel: cancel,
		policy: opts.Confine,
		cwd:    opts.Workdir,
		env:    append([]string(nil), opts.Env...),
		seen:   make(map[string]files.Digest),

		finished: make(chan struct{}),
	}
}

// PastTask says that task id ran under an earlier Boris on the same state directory, or
// is nil (see [tasks.Manager.Restore]).
func (s *Session) PastTask(id string) error { return s.Tasks.PastTask(id) }

// Context is done once the session is closed; work done for the session should stop then.
func (s *Session) Context() context.Context { return s.ctx }

// Cwd returns the session's working directory.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// SetCwd changes the session's working directory.
func (s *Session) SetCwd(dir string) {
	s.mu.Lock()
	s.cwd = dir
	s.mu.Unlock()
}

// Env returns a copy of the environment commands run with, as KEY=value pairs.
func (s *Session) Env() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.env...)
}

// ApplyEnv applies to the session's environment the changes that turned before into
// after: variables set or changed in after are set, variables of before missing from
// after are removed, and everything else, including changes made meanwhile by other
// commands, is kept.
func (s *Session) ApplyEnv(before, after []string) {
	was := envMap(before)
	now := envMap(after)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := envMap(s.env)
	for k, v := range now {
		if old, ok := was[k]; !ok || old != v {
			cur[k] = v
		}
	}
	for k := range was {
		if _, ok := now[k]; !ok {
			delete(cur, k)
		}
	}
	env := make([]string, 0, len(cur))
	for _, kv := range s.env { // keep the existing order, then append new variables
		k, _, _ := strings.Cut(kv, "=")
		if v, ok := cur[k]; ok {
			env = append(env, k+"="+v)
			delete(cur, k)
		}
	}
	for _, kv := range after {
		k, _, _ := strings.Cut(kv, "=")
		if v, ok := cur[k]; ok {
			env = append(env, k+"="+v)
			delete(cur, k)
		}
	}
	s.env = env
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// Resolve turns path, relative to the session's cwd, into the real absolute path the file
// tools may read, or refuses it (see [pathscope.Resolver.Resolve]). Paths inside the
// session's own spill directory are always readable, so spilled output can be viewed.
func (s *Session) Resolve(path string) (string, error) {
	cwd := s.Cwd()
	if dir := s.spill(); dir != "" {
		p := path
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if p = filepath.Clean(p); inSpill(p, dir) {
			if real, err := filepath.EvalSymlinks(p); err == nil && inSpill(real, dir) {
				return real, nil
			}
		}
	}
	return s.Scope.Resolve(cwd, path)
}

// ResolveWrite is [Session.Resolve] for a path a file tool will write: the spill directory,
// which holds saved command output and the files commands are run with, is refused.
func (s *Session) ResolveWrite(path string) (string, error) {
	real, err := s.Resolve(path)
	if err != nil {
		return "", err
	}
	if err := s.writable(real); err != nil {
		return "", err
	}
	return real, nil
}

func (s *Session) writable(real string) error {
	if dir := s.spill(); dir != "" && (inSpill(real, dir) || real == dir) {
		return fmt.Errorf("%w: %s is in this session's saved-output directory, which file tools may read but not write", pathscope.ErrDenied, real)
	}
	return nil
}

// OpenRead opens the real path real for reading (flag as for os.OpenFile) through the root
// that allows it: the spill directory, or an allowed directory (see
// [pathscope.Resolver.Open]). It refuses what was not what was checked.
func (s *Session) OpenRead(real string, flag int) (*os.File, error) {
	if dir := s.spill(); dir != "" && (inSpill(real, dir) || real == dir) {
		return pathscope.OpenBeneath(dir, real, flag)
	}
	return s.Scope.Open(real, flag)
}

// OpenWrite opens real (a file to replace, or the directory to write in) like
// [Session.OpenRead], for a write: the spill directory is refused.
func (s *Session) OpenWrite(real string, flag int) (*os.File, error) {
	if err := s.writable(real); err != nil {
		return nil, err
	}
	return s.Scope.Open(real, flag)
}

func inSpill(p, dir string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// MarkSeen records the content of the file at the real path as the model last saw it.
func (s *Session) MarkSeen(path string, d files.Digest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[path]; !ok {
		if len(s.seenList) >= maxSeen {
			for _, old := range s.seenList[:maxSeen/2] {
				delete(s.seen, old)
			}
			s.seenList = append([]string(nil), s.seenList[maxSeen/2:]...)
		}
		s.seenList = append(s.seenList, path)
	}
	s.seen[path] = d
}

// Seen returns the content digest recorded by [Session.MarkSeen] for path.
func (s *Session) Seen(path string) (files.Digest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.seen[path]
	return d, ok
}

// SpillDir returns a private directory, created on first use and removed on Close, where
// output too large for a result is saved in full.
func (s *Session) SpillDir() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("session is closed")
	}
	if s.spillDir == "" {
		dir, err := makeSpillDir(s.ID)
		if err != nil {
			return "", fmt.Errorf("creating spill directory: %w", err)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		s.spillDir = dir
	}
	return s.spillDir, nil
}

func (s *Session) spill() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spillDir
}

// Close cancels the session's context, kills its tasks, ends its confinement domain and
// removes its spill directory. It is safe to call more than once: later calls wait until the
// first has finished.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.finished
		return nil
	}
	s.closed = true
	defer close(s.finished)
	dir := s.spillDir
	s.mu.Unlock()

	s.cancel()
	s.Tasks.Close()
	// Wait for a domain being made, and keep one from being made from now on.
	s.confine.once.Do(func() { s.confine.err = errors.New("session is closed") })
	if s.confine.domain != nil {
		s.confine.domain.Close()
	}
	if dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}

// confinement is the session's confinement domain, made on first use.
type confinement struct {
	once   sync.Once
	domain *confine.Domain
	err    error
}

// Launcher returns what starts the session's commands (a shell.Command's Launch): nil when
// they run unconfined, else what forks them in the session's confinement domain. The
// domain is made on first use, with a private temporary directory that commands may write
// in, and that the session's TMPDIR names from then on; it and its processes' access end
// with the session.
func (s *Session) Launcher() (shell.ForkExec, error) {
	if s.policy == nil || !s.policy.Confined() {
		return nil, nil
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errors.New("session is closed")
	}
	s.confine.once.Do(func() { s.confine.domain, s.confine.err = s.newDomain() })
	if s.confine.err != nil {
		return nil, s.confine.err
	}
	return s.confine.domain.ForkExec, nil
}

func (s *Session) newDomain() (*confine.Domain, error) {
	if !s.policy.Paths() {
		return s.policy.Domain(nil, nil)
	}
	spill, err := s.SpillDir()
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(spill, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("creating the temporary directory for commands: %w", err)
	}
	// Commands read their shell's setup, long scripts and spilled output in the spill
	// directory, and write in tmp.
	d, err := s.policy.Domain([]string{tmp}, []string{spill})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.env = append(slices.DeleteFunc(s.env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+tmp)
	s.mu.Unlock()
	return d, nil
}

// makeSpillDir makes a private directory for saved output of the session id. Its name
// has a fixed length (os.MkdirTemp's random part does not), so that the notes naming it,
// and with them how much of an output fits a result's budget, do not vary from one
// session to the next.
func makeSpillDir(id string) (string, error) {
	for range 10 {
		dir := filepath.Join(os.TempDir(), "boris-"+safeName(id)+"-"+rand.Text()[:10])
		if err := os.Mkdir(dir, 0o700); !errors.Is(err, fs.ErrExist) {
			return dir, err
		}
	}
	return "", errors.New("every name tried is taken")
}

func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
		if b.Len() >= 12 {
			break
		}
	}
	return b.String()
}
