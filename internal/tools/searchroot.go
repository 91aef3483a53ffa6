package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/pathscope"
	"github.com/mjkoo/boris/internal/search"
	"github.com/mjkoo/boris/internal/session"
)

// filter builds the walk filter shared by grep and find.
func (h *handlers) filter(cwd string, hidden, noIgnore bool, globs []string, typ string) search.Filter {
	f := search.Filter{Hidden: hidden, NoIgnore: noIgnore, Globs: globs, MaxFileSize: h.Config.MaxFileSize, Top: cwd}
	if t := strings.TrimSpace(typ); t != "" {
		f.Types = []string{t}
	}
	return f
}

// searchRoot resolves the path a search starts from; "" means the working directory.
func searchRoot(cwd, path string, resolve func(string) (string, error)) (root, shown string, err error) {
	if path == "" {
		path = "."
	}
	root, err = resolve(path)
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(root); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", errorf(CodeNotFound, "%s does not exist (relative paths start at %s); check the path, or search a parent directory", path, cwd)
		}
		return "", "", err
	}
	return root, path, nil
}

// relativizer shows absolute paths relative to cwd when they are inside it.
//
// Paths under root, the resolved search root, are shown under asked, the path as the
// caller gave it, so a search through a symlinked directory names files the way the
// caller reaches them.
//
// A path with a control character in it (a newline, say) is quoted (see
// [files.QuotePath]), so that it cannot forge lines of output.
func relativizer(cwd, root, asked string) func(string) string {
	rel := relativeTo(cwd, root, asked)
	return func(abs string) string { return files.QuotePath(rel(abs)) }
}

func relativeTo(cwd, root, asked string) func(string) string {
	dirs := []string{cwd}
	if real, err := filepath.EvalSymlinks(cwd); err == nil && real != cwd {
		dirs = append(dirs, real)
	}
	lexical := asked
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(cwd, lexical)
	}
	lexical = filepath.Clean(lexical)
	return func(abs string) string {
		if lexical != root && (abs == root || strings.HasPrefix(abs, root+"/")) {
			abs = lexical + abs[len(root):]
		}
		for _, d := range dirs {
			if abs == d {
				return "."
			}
			if d == "/" {
				return abs[1:]
			}
			if strings.HasPrefix(abs, d) && abs[len(d)] == '/' {
				return abs[len(d)+1:]
			}
		}
		return abs
	}
}

// sessionScope is what a search may see and open: the session's path rules, and its
// spill directory for reading.
type sessionScope struct {
	*pathscope.Resolver
	sess *session.Session
}

func (s sessionScope) Open(real string, flag int) (*os.File, error) {
	return s.sess.OpenRead(real, flag)
}

func scopeOf(sess *session.Session) search.Scope { return sessionScope{sess.Scope, sess} }
