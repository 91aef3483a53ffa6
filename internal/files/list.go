package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// ListDepth is how many levels of a directory [List] shows.
const ListDepth = 2

// DefaultListMax is how many entries [List] shows before it only counts the rest.
const DefaultListMax = 1000

// skipDir reports whether a directory is never listed: it is large and rarely what the
// model is looking for.
func skipDir(name string) bool { return name == ".git" || name == "node_modules" }

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
// counts. Every directory is opened through open and read from what was opened, and a
// symlink's target is read inside its open directory, so a directory swapped meanwhile
// cannot show what lies elsewhere. It stops when ctx ends.
func List(ctx context.Context, open Opener, dir string, max int, hidden func(string) bool) (*Listing, error) {
	d, err := open.open(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, errorf(ErrInvalid, "%s is not a directory", dir)
		}
		return nil, err
	}
	l := &Listing{}
	err = l.walk(ctx, open, d, dir, "", 1, max, hidden)
	d.Close()
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Listing) walk(ctx context.Context, open Opener, d *os.File, dir, rel string, depth, max int, hidden func(string) bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("listing %s stopped: the request ended (%w)", dir, err)
	}
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil && len(entries) == 0 {
		if depth == 1 {
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		l.add(QuotePath(rel+"/")+" [contents not readable: "+reasonText(err)+"]", max)
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		abs := filepath.Join(dir, name)
		if skipDir(name) || hidden != nil && hidden(abs) {
			continue
		}
		r := filepath.Join(rel, name)
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := readlinkAt(d, name)
			if err != nil {
				target = "?"
			}
			l.add(QuotePath(r)+" -> "+QuotePath(target), max)
		case e.IsDir():
			l.add(QuotePath(r+"/"), max)
			if depth < ListDepth {
				sub, err := open.open(abs, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK)
				if err != nil {
					l.add(QuotePath(r+"/")+" [contents not readable: "+reasonText(err)+"]", max)
					continue
				}
				err = l.walk(ctx, open, sub, abs, r, depth+1, max, hidden)
				sub.Close()
				if err != nil {
					return err
				}
			}
		default:
			l.add(QuotePath(r), max)
		}
	}
	return nil
}

// readlinkAt reads the symlink name in the open directory d.
func readlinkAt(d *os.File, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(int(d.Fd()), name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func reasonText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	if errors.Is(err, syscall.EACCES) {
		return syscall.EACCES.Error()
	}
	return err.Error()
}

// QuotePath returns p as it is, or quoted in Go syntax ("a\nb") when it holds a control
// character (a newline, a tab, an escape), bytes that are not UTF-8, or starts with a
// quote, so that a file name can never forge extra lines or fields in a result.
func QuotePath(p string) string {
	if strings.HasPrefix(p, `"`) || !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool {
		return r < 0x20 || r == 0x7f || unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029'
	}) {
		return strconv.Quote(p)
	}
	return p
}

func (l *Listing) add(entry string, max int) {
	if len(l.Entries) < max {
		l.Entries = append(l.Entries, entry)
		return
	}
	l.Omitted++
}
