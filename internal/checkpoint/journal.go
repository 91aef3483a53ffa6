package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Kind is what a path is.
type Kind uint8

// The kinds of a path.
const (
	Absent Kind = iota
	File
	Dir
	Symlink
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case Dir:
		return "directory"
	case Symlink:
		return "symlink"
	}
	return "nothing"
}

// State is what a path held at one moment.
type State struct {
	Kind Kind        `json:"k,omitempty"`
	Mode fs.FileMode `json:"m,omitempty"` // permission, setuid, setgid and sticky bits
	Blob string      `json:"b,omitempty"` // digest of a file's content in the store
	Size int64       `json:"s,omitempty"`
	Link string      `json:"l,omitempty"` // a symlink's target
	// Lost says why the content was not kept ("" when it was, or there is none): such a
	// state cannot be put back.
	Lost string `json:"lost,omitempty"`
}

// Same reports whether s and o hold the same thing.
func (s State) Same(o State) bool {
	if s.Kind != o.Kind {
		return false
	}
	switch s.Kind {
	case File:
		if s.Blob == "" || o.Blob == "" {
			return s.Size == o.Size && s.Mode == o.Mode && s.Blob == o.Blob && s.Lost != "" && o.Lost != ""
		}
		return s.Blob == o.Blob && s.Mode == o.Mode
	case Dir:
		return s.Mode == o.Mode
	case Symlink:
		return s.Link == o.Link
	}
	return true
}

// Change is what one path held before and after a call.
type Change struct {
	Path   string `json:"p"` // slash-separated, relative to the workspace root
	Before State  `json:"a"`
	After  State  `json:"z"`
}

// Verb says in a word what the change did: added, removed, changed (content, mode or
// kind), renamed is not known here (a rename is a removal and an addition).
func (c Change) Verb() string {
	switch {
	case c.Before.Kind == Absent:
		return "added"
	case c.After.Kind == Absent:
		return "removed"
	}
	return "changed"
}

// Checkpoint is the record of one call's changes. Its ID names the state just before the
// call ran.
type Checkpoint struct {
	ID      string    `json:"id"`
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`
	Tool    string    `json:"tool,omitempty"` // "" for changes made between calls
	Call    string    `json:"call,omitempty"` // the call in one line
	Session string    `json:"session,omitempty"`
	Turn    string    `json:"turn,omitempty"` // the client's turn the call belongs to, if it said
	Label   string    `json:"label,omitempty"`
	Changes []Change  `json:"changes,omitempty"`
	// Pending marks a rewind that was recorded but not yet known to be applied; the next
	// open applies it.
	Pending bool `json:"pending,omitempty"`
}

// Counts returns how many paths the checkpoint added, changed and removed.
func (c *Checkpoint) Counts() (added, changed, removed int) {
	for _, ch := range c.Changes {
		switch ch.Verb() {
		case "added":
			added++
		case "removed":
			removed++
		default:
			changed++
		}
	}
	return
}

// Unrestorable returns the changes whose earlier state cannot be put back.
func (c *Checkpoint) Unrestorable() []Change {
	var out []Change
	for _, ch := range c.Changes {
		if ch.Before.Lost != "" {
			out = append(out, ch)
		}
	}
	return out
}

// ID returns the id of the checkpoint with sequence number seq.
func ID(seq int) string { return "cp-" + strconv.Itoa(seq) }

// parseID returns the sequence number an id names.
func parseID(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(id), "cp-"))
	return n, err == nil && n > 0
}

// journal keeps one file a checkpoint, written to a temporary name and renamed into
// place: a checkpoint is in the journal whole or not at all, whenever the process is
// killed. A rewind's records are also synced, with their directory, so that one survives
// a power loss too; a call's are not (a sync costs a call milliseconds), so a power loss
// may lose the last calls' checkpoints, never a rewind's.
//
// A call's record is written with the new contents the call read, as a pack ([encodePack]):
// one file a call.
type journal struct {
	dir   string
	store *Store
	spare *spareFile // the unnamed file the next pack goes to (nil: made then)
}

func (j journal) name(seq int) string {
	return filepath.Join(j.dir, fmt.Sprintf("%010d.json", seq))
}

func (j journal) packName(seq int) string {
	return filepath.Join(j.dir, fmt.Sprintf("%010d.pack", seq))
}

// writePack stores c, with the contents of b, as a pack: not synced, written unnamed and
// linked into place once whole where the system allows. Once it is, the store finds b's
// contents there.
func (j journal) writePack(c *Checkpoint, b *batch) error {
	data, offs, err := encodePack(c, b)
	if err != nil {
		return err
	}
	name := j.packName(c.Seq)
	var ok bool
	if j.spare != nil {
		ok, err = j.spare.write(name, data, "pack-before-link")
	} else {
		ok, err = writeUnnamed(j.dir, name, data, 0, "pack-before-link")
	}
	if !ok || errors.Is(err, fs.ErrExist) {
		err = writeFile(name, data, false)
	}
	if err != nil {
		return err
	}
	var contents []packed
	if b != nil {
		for i, d := range b.digests {
			contents = append(contents, packed{digest: d, off: offs[i], n: int64(len(b.data[i]))})
		}
	}
	j.store.addPack(name, contents, true)
	return nil
}

// write stores c, synced to disk if sync. A record not synced is new: it is written
// unnamed and linked into place once whole, where the system allows.
func (j journal) write(c *Checkpoint, sync bool) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if !sync {
		if ok, err := writeUnnamed(j.dir, j.name(c.Seq), data, 0, "journal-before-rename"); ok && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return writeFile(j.name(c.Seq), data, sync)
}

// load reads every checkpoint, oldest first, removing what a killed writer left, and
// tells the store where the packs' contents are. A torn pack (see [encodePack]) is
// removed: its names are returned.
func (j journal) load() (_ []*Checkpoint, torn []string, _ error) {
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, nil, err
	}
	ents, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, nil, err
	}
	var out []*Checkpoint
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(j.dir, name)
		switch {
		case strings.HasSuffix(name, ".pack"):
			c, contents, err := readPack(p)
			if errors.Is(err, errTorn) {
				torn = append(torn, name)
				os.Remove(p)
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("checkpoint journal %s: %w", name, err)
			}
			j.store.addPack(p, contents, false)
			out = append(out, c)
		case strings.HasSuffix(name, ".json"):
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, nil, err
			}
			var c Checkpoint
			if err := json.Unmarshal(data, &c); err != nil {
				return nil, nil, fmt.Errorf("checkpoint journal %s: %w", name, err)
			}
			out = append(out, &c)
		default:
			os.Remove(p) // a temporary file of a killed write
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out, torn, nil
}

// writeFile replaces path with data: a temporary file, renamed; with sync, the file is
// synced before and the directory after.
func writeFile(path string, data []byte, sync bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = crashPoint("journal-before-rename")
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// crashPoint is where tests kill the process, to see that a kill at that moment leaves
// every file and the store whole. It does nothing unless a test set crashAt.
func crashPoint(name string) error {
	if crashAt != "" && crashAt == name {
		if crashHits.Add(1) == crashAfter {
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {}
		}
	}
	return nil
}

// crashAt names the crash point a test stops at, the crashAfter-th time it is reached
// (export_test.go).
var (
	crashAt    string
	crashAfter int64
	crashHits  atomic.Int64
)
