package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ListDepth is how many levels of a directory [List] shows.
const ListDepth = 2

// DefaultListMax is how many entries [List] shows before it only counts the rest.
const DefaultListMax = 1000

// skipDirs are never listed: they are large and rarely what the model is looking for.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// Listing is what [List] found.
type Listing struct {
	// Entries are paths relative to the listed directory, in walk order: each directory
	// (marked with a trailing /) is followed by its contents, names sorted. A symlink reads
	// "name -> target" and is not followed.
	Entries []string
	Omitted int // entries past the cap, counted but not listed
}

// List walks dir two levels deep, showing dotfiles but skipping .git and node_modules, and
// leaving out every path hidden reports true for (absolute paths). After max entries it only
// counts. It stops when ctx ends.
func List(ctx context.Context, dir string, max int, hidden func(string) bool) (*Listing, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, errorf(ErrInvalid, "%s is not a directory", dir)
	}
	l := &Listing{}
	if err := l.walk(ctx, dir, "", 1, max, hidden); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Listing) walk(ctx context.Context, dir, rel string, depth, max int, hidden func(string) bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("listing %s stopped: the request ended (%w)", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if depth == 1 {
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		reason := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
		l.add(rel+"/ [contents not readable: "+reason+"]", max)
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		abs := filepath.Join(dir, name)
		if skipDirs[name] || hidden != nil && hidden(abs) {
			continue
		}
		r := filepath.Join(rel, name)
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(abs)
			if err != nil {
				target = "?"
			}
			l.add(r+" -> "+target, max)
		case e.IsDir():
			l.add(r+"/", max)
			if depth < ListDepth {
				if err := l.walk(ctx, abs, r, depth+1, max, hidden); err != nil {
					return err
				}
			}
		default:
			l.add(r, max)
		}
	}
	return nil
}

func (l *Listing) add(entry string, max int) {
	if len(l.Entries) < max {
		l.Entries = append(l.Entries, entry)
		return
	}
	l.Omitted++
}
