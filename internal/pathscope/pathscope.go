package pathscope

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mjkoo/boris/internal/glob"
)

// ErrDenied is wrapped by every refusal, so callers can tell a refusal from an I/O error.
var ErrDenied = errors.New("access denied")

// ErrInvalid matches the errors for paths that can name nothing: empty, or with a NUL.
var ErrInvalid = errors.New("invalid path")

type invalidPathError string

func (e invalidPathError) Error() string        { return string(e) }
func (e invalidPathError) Is(target error) bool { return target == ErrInvalid }

// maxLinks bounds symlink hops, as the kernel's ELOOP does.
const maxLinks = 40

// Resolver decides which paths the file tools may touch. It is immutable and safe for
// concurrent use.
type Resolver struct {
	roots    []string      // canonical absolute allowed roots; empty means everything
	denyDirs []string      // canonical absolute denied directories or files
	patterns []denyPattern // matched against paths relative to bases, and absolute
	bases    []string      // workdir and roots: the places relative patterns are anchored at
}

// New builds a Resolver. allow and deny entries that are relative are taken against workdir
// (never against the process's working directory). A deny entry with glob characters
// (*?[{) is a glob (package [glob], extended syntax); an entry without a slash, such as '*.key', '.env' or
// 'secrets', matches a name at any depth. A pattern whose leading directories go through a
// symlink also matches the real paths they lead to.
func New(workdir string, allow, deny []string) (*Resolver, error) {
	r := &Resolver{}
	for _, a := range allow {
		abs := absUnder(workdir, a)
		canon, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %s: %w", abs, err)
		}
		r.roots = append(r.roots, canon)
	}
	for _, d := range deny {
		name := !strings.Contains(d, "/") && d != "." && d != ".." && d != "~"
		if name || strings.ContainsAny(d, "*?[{") {
			pats := []string{filepath.ToSlash(d)}
			if real := realPattern(workdir, d); real != "" {
				pats = append(pats, real)
			}
			for _, pat := range pats {
				g, err := glob.Compile(pat, glob.Extended)
				if err != nil {
					return nil, fmt.Errorf("deny pattern %q is not a valid glob: %v", d, err)
				}
				r.patterns = append(r.patterns, denyPattern{text: pat, glob: g})
			}
			continue
		}
		abs := absUnder(workdir, d)
		r.denyDirs = append(r.denyDirs, abs)
		if canon, err := canonical(abs); err == nil && canon != abs {
			r.denyDirs = append(r.denyDirs, canon)
		}
	}
	r.bases = append([]string{workdir}, r.roots...)
	if canon, err := filepath.EvalSymlinks(workdir); err == nil && canon != workdir {
		r.bases = append(r.bases, canon)
	}
	return r, nil
}

// denyPattern is a --deny-dir glob, as given and compiled.
type denyPattern struct {
	text string
	glob *glob.Glob
}

// realPattern returns pat with its literal leading directories (those before the first
// component with a glob character) replaced by their real path, when they go through a
// symlink, so that 'LINK/**/*.key' also hides the real files; else "".
func realPattern(workdir, pat string) string {
	parts := strings.Split(filepath.ToSlash(pat), "/")
	n := 0
	for n < len(parts)-1 && !strings.ContainsAny(parts[n], "*?[{\\") {
		n++
	}
	if n == 0 || n == 1 && parts[0] == "" {
		return ""
	}
	prefix := absUnder(workdir, strings.Join(parts[:n], "/"))
	real, err := canonical(prefix)
	if err != nil || real == prefix {
		return ""
	}
	var b strings.Builder
	for _, c := range real {
		if strings.ContainsRune("*?[]{}\\", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return filepath.ToSlash(b.String()) + "/" + strings.Join(parts[n:], "/")
}

// Roots returns the canonical allowed roots; none means no confinement.
func (r *Resolver) Roots() []string { return append([]string(nil), r.roots...) }

// Confined reports whether file tools are limited to allowed roots.
func (r *Resolver) Confined() bool { return len(r.roots) > 0 }

// DenyRules returns the deny rules in force, for telling the model what is hidden.
func (r *Resolver) DenyRules() []string {
	rules := append([]string(nil), r.denyDirs...)
	for _, p := range r.patterns {
		rules = append(rules, p.text)
	}
	return rules
}

// Resolve returns the real absolute path that path (relative paths are taken against cwd)
// refers to, with every symlink followed; its last parts may not exist yet. It refuses,
// wrapping [ErrDenied], a path outside the allowed roots or matching a deny rule.
func (r *Resolver) Resolve(cwd, path string) (string, error) {
	if path == "" {
		return "", invalidPathError("path is empty: give a file or directory path")
	}
	if strings.ContainsRune(path, 0) {
		return "", invalidPathError("path contains a NUL byte")
	}
	lexical := absUnder(cwd, path)
	if r.denied(lexical) {
		return "", fmt.Errorf("%w: %s matches a deny rule (--deny-dir)", ErrDenied, path)
	}
	real, err := canonical(lexical)
	if err != nil {
		if partial, ok := err.(*stuckError); ok && !r.within(partial.at) {
			return "", fmt.Errorf("%w: %s leads outside the allowed directories (%s)", ErrDenied, path, strings.Join(r.roots, ", "))
		}
		// The error may name a place a link leads to; say only what happened.
		return "", fmt.Errorf("resolving %s: %s", path, reasonOnly(err))
	}
	if real == lexical {
		return real, r.Check(real)
	}
	// Through a symlink: never say where it leads unless that is allowed.
	if !r.within(real) {
		return "", fmt.Errorf("%w: %s leads outside the allowed directories (%s)", ErrDenied, path, strings.Join(r.roots, ", "))
	}
	if r.denied(real) {
		return "", fmt.Errorf("%w: %s leads to a path that matches a deny rule (--deny-dir)", ErrDenied, path)
	}
	return real, nil
}

// reasonOnly is the OS's explanation in err, without the path it names.
func reasonOnly(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Check reports whether the already-canonical absolute path real may be used.
func (r *Resolver) Check(real string) error {
	if !r.within(real) {
		return fmt.Errorf("%w: %s is outside the allowed directories (%s)", ErrDenied, real, strings.Join(r.roots, ", "))
	}
	if r.denied(real) {
		return fmt.Errorf("%w: %s matches a deny rule (--deny-dir)", ErrDenied, real)
	}
	return nil
}

// Hidden reports whether a path found while walking (absolute, not necessarily canonical)
// must be left out of results: outside the roots or denied.
func (r *Resolver) Hidden(abs string) bool {
	if r.denied(abs) {
		return true
	}
	return len(r.roots) > 0 && !r.within(abs)
}

func (r *Resolver) within(p string) bool {
	if len(r.roots) == 0 {
		return true
	}
	for _, root := range r.roots {
		if isUnder(p, root) {
			return true
		}
	}
	return false
}

func (r *Resolver) denied(p string) bool {
	for _, d := range r.denyDirs {
		if isUnder(p, d) {
			return true
		}
	}
	if len(r.patterns) == 0 {
		return false
	}
	slash := filepath.ToSlash(p)
	var rels []string
	for _, b := range r.bases {
		if isUnder(p, b) && p != b {
			rel, _ := filepath.Rel(b, p)
			rels = append(rels, filepath.ToSlash(rel))
		}
	}
	for _, pat := range r.patterns {
		if strings.HasPrefix(pat.text, "/") {
			if matchPrefixes(pat.glob, strings.TrimPrefix(slash, "/")) {
				return true
			}
			continue
		}
		if !strings.Contains(pat.text, "/") {
			// A bare name pattern matches any component below the workdir or a root (any
			// component at all for paths elsewhere), as in .gitignore.
			within := slash
			if len(rels) > 0 {
				within = rels[0]
			}
			for _, part := range strings.Split(within, "/") {
				if part != "" && pat.glob.Match(part) {
					return true
				}
			}
			continue
		}
		for _, rel := range rels {
			if matchPrefixes(pat.glob, rel) {
				return true
			}
		}
		if strings.HasPrefix(pat.text, "**/") && matchPrefixes(pat.glob, strings.TrimPrefix(slash, "/")) {
			return true
		}
	}
	return false
}

// matchPrefixes matches g against the relative path p and each of its parent directories,
// so a pattern that names a directory hides everything inside it.
func matchPrefixes(g *glob.Glob, p string) bool {
	for {
		if g.Match(p) {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			return false
		}
		p = p[:i]
	}
}

func isUnder(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == filepath.Separator
}

func absUnder(base, p string) string {
	if strings.HasPrefix(p, "~/") || p == "~" {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// stuckError is a failure to follow a path further than at.
type stuckError struct {
	at  string
	err error
}

func (e *stuckError) Error() string { return reasonOnly(e.err) }
func (e *stuckError) Unwrap() error { return e.err }

// canonical follows every symlink in the absolute, clean path p, one component at a time,
// so that a dangling link resolves to where a write through it would create the file.
// Components after the first missing one are kept as written.
func canonical(p string) (string, error) {
	todo := strings.Split(strings.TrimPrefix(p, "/"), "/")
	done := "/"
	hops := 0
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, part)
		info, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// Nothing exists below a missing component (or a file used as a directory),
			// so nothing there can be a link.
			done = next
			continue
		}
		if err != nil {
			return "", &stuckError{at: next, err: err}
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		hops++
		if hops > maxLinks {
			return "", syscall.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", &stuckError{at: next, err: err}
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		todo = append(strings.Split(strings.TrimPrefix(filepath.Clean(target), "/"), "/"), todo...)
	}
	return done, nil
}
