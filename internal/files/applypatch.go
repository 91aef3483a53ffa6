package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// PatchOptions are what [ApplyPatch] needs besides the patch.
type PatchOptions struct {
	// Resolve turns a path as the patch names it into the real absolute path to write, or
	// refuses it (see pathscope.Resolver).
	Resolve     func(path string) (string, error)
	Open        Opener // opens files and directories to read and write
	MaxFileSize int64
}

// PatchedFile is one file a patch changed.
type PatchedFile struct {
	Kind OpKind // OpAdd: created or overwritten; OpUpdate: modified (or moved there); OpDelete: deleted
	Path string // as the patch names it: an update's new path, when it moved
	Abs  string
	// EOL is the line ending new lines were written with, when the file's is not LF:
	// "\r\n" or "\r".
	EOL string
}

// OpError is the error of operation Index (from 1) of a patch's Count.
type OpError struct {
	Op           *PatchOp
	Index, Count int
	Err          error
}

func (e *OpError) Error() string { return e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// ApplyPatch applies p to the files, all or nothing: every operation is worked out in
// memory first, and the first that fails (a chunk whose lines are not in the file, a file
// to update or delete that does not exist, a path refused, a file or directory without a
// write bit, a file over the size limit: the rules of every edit, for every operation)
// fails the patch with an [OpError] before any file is touched. The new contents are then written to temporary
// files beside their targets, the files read are checked to be unchanged, and only then
// are the temporary files renamed into place and deleted files removed; if one of those
// steps fails, the ones before it are undone. Updated files keep their mode, BOM,
// encoding, line endings and final newline; a moved file keeps its mode. It returns the
// files changed: added, then modified, then deleted, as Codex lists them.
func ApplyPatch(ctx context.Context, p *Patch, opts PatchOptions) ([]PatchedFile, error) {
	if len(p.Ops) == 0 {
		return nil, errorf(ErrInvalid, "the patch has no file operations: put *** Add File, *** Update File or *** Delete File sections between *** Begin Patch and *** End Patch")
	}
	abs, err := resolveOps(p, opts.Resolve)
	if err != nil {
		return nil, err
	}
	defer lockPaths(abs)()
	t := &patchTree{opts: opts, files: map[string]*fileState{}}
	for i := range p.Ops {
		if err := t.apply(ctx, &p.Ops[i], abs[i]); err != nil {
			return nil, &OpError{Op: &p.Ops[i], Index: i + 1, Count: len(p.Ops), Err: err}
		}
	}
	if err := t.commit(); err != nil {
		return nil, err
	}
	return t.report(p, abs), nil
}

// resolveOps returns the real path of each operation's file and of its new path, if it
// moves.
func resolveOps(p *Patch, resolve func(string) (string, error)) ([][2]string, error) {
	out := make([][2]string, len(p.Ops))
	for i := range p.Ops {
		op := &p.Ops[i]
		for j, path := range []string{op.Path, op.MoveTo} {
			if path == "" {
				continue
			}
			abs, err := resolve(path)
			if err != nil {
				return nil, &OpError{Op: op, Index: i + 1, Count: len(p.Ops), Err: err}
			}
			out[i][j] = abs
		}
	}
	return out, nil
}

// lockPaths locks every path for an edit, in one order so that two patches cannot wait
// for each other, and returns the function that unlocks them.
func lockPaths(pairs [][2]string) (unlock func()) {
	var paths []string
	for _, p := range pairs {
		for _, s := range p {
			if s != "" {
				paths = append(paths, s)
			}
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	unlocks := make([]func(), len(paths))
	for i, p := range paths {
		unlocks[i] = lockPath(p)
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}

// fileState is one file as the patch, worked out in memory, leaves it.
type fileState struct {
	abs    string
	orig   []byte      // the content read
	info   fs.FileInfo // as read; nil when the file did not exist
	data   []byte      // the content the patch leaves
	exists bool        // the file exists when the patch is done
	modeOf fs.FileInfo // whose mode and owner a written file gets
	eol    string      // see PatchedFile.EOL
}

// changed reports that the patch changes the file on disk.
func (s *fileState) changed() bool {
	return s.exists != (s.info != nil) || s.exists && !bytes.Equal(s.data, s.orig)
}

// patchTree is the files a patch touches, in memory, in the order it first touched them.
type patchTree struct {
	opts  PatchOptions
	files map[string]*fileState
	order []string
}

// state returns the file at abs as the patch has left it so far, reading it the first time.
func (t *patchTree) state(abs string) (*fileState, error) {
	if s, ok := t.files[abs]; ok {
		return s, nil
	}
	s := &fileState{abs: abs}
	data, info, err := readRegular(t.opts.Open, abs, t.opts.MaxFileSize)
	switch {
	case err == nil:
		s.orig, s.info, s.data, s.exists, s.modeOf = data, info, data, true, info
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, err
	}
	t.files[abs] = s
	t.order = append(t.order, abs)
	return s, nil
}

// apply works out op in memory; abs holds its real paths.
func (t *patchTree) apply(ctx context.Context, op *PatchOp, abs [2]string) error {
	s, err := t.state(abs[0])
	if err != nil {
		return err
	}
	switch op.Kind {
	case OpAdd:
		if err := t.writable(s); err != nil {
			return err
		}
		if err := t.fits(s.abs, len(op.Content)); err != nil {
			return err
		}
		s.data, s.exists = []byte(op.Content), true
		return nil
	case OpDelete:
		if !s.exists {
			return fmt.Errorf("cannot delete %s: %w", abs[0], fs.ErrNotExist)
		}
		if err := t.writable(s); err != nil {
			return err
		}
		s.data, s.exists = nil, false
		return nil
	}
	if !s.exists {
		return fmt.Errorf("cannot update %s: %w (to create it, use *** Add File: %s)", abs[0], fs.ErrNotExist, op.Path)
	}
	data, eol, err := t.update(ctx, op, s)
	if err != nil {
		return err
	}
	if abs[1] == "" || abs[1] == abs[0] {
		s.data, s.eol = data, eol
		return nil
	}
	return t.move(s, abs[1], data, eol)
}

// update returns the content op's chunks make of s's, and its line ending when not LF.
func (t *patchTree) update(ctx context.Context, op *PatchOp, s *fileState) ([]byte, string, error) {
	if typ, ok := binaryType(s.data); ok {
		return nil, "", binaryError(s.abs, int64(len(s.data)), typ)
	}
	if err := t.writable(s); err != nil {
		return nil, "", err
	}
	text := splitPatchText(s.data)
	final := text.finalEOL()
	if err := text.update(ctx, op.Path, op.Chunks); err != nil {
		return nil, "", err
	}
	data := text.bytes(final)
	if err := lossless(s.abs, s.data, addedText(op.Chunks), false); err != nil {
		return nil, "", err
	}
	if err := t.fits(s.abs, len(data)); err != nil {
		return nil, "", err
	}
	if text.eol == "\n" {
		return data, "", nil
	}
	return data, text.eol, nil
}

// writable refuses to write or remove s by the rules every edit keeps: the file on disk
// ([writable]) and its directory ([canWriteIn]).
func (t *patchTree) writable(s *fileState) error {
	if s.info != nil {
		if err := writable(s.abs, s.info); err != nil {
			return err
		}
	}
	return canWriteIn(t.opts.Open, filepath.Dir(s.abs))
}

// fits refuses to leave n bytes in abs over the size limit.
func (t *patchTree) fits(abs string, n int) error {
	if int64(n) > t.opts.MaxFileSize {
		return errorf(ErrTooLarge, "the patch would make %s %s bytes, over the %s-byte limit (--max-file-size)", abs, thousands(int64(n)), thousands(t.opts.MaxFileSize))
	}
	return nil
}

// addedText is every line the chunks add, for the encoding check.
func addedText(chunks []Chunk) []byte {
	var b []byte
	for _, c := range chunks {
		for _, l := range c.New {
			b = append(b, l...)
			b = append(b, '\n')
		}
	}
	return b
}

// move leaves data at to, with from's mode, and removes from.
func (t *patchTree) move(from *fileState, to string, data []byte, eol string) error {
	d, err := t.state(to)
	if err != nil {
		return err
	}
	if err := t.writable(d); err != nil {
		return err
	}
	d.data, d.exists, d.modeOf, d.eol = data, true, from.modeOf, eol
	from.data, from.exists = nil, false
	return nil
}

// report lists the files changed: added, then modified, then deleted.
func (t *patchTree) report(p *Patch, abs [][2]string) []PatchedFile {
	var out []PatchedFile
	for _, kind := range []OpKind{OpAdd, OpUpdate, OpDelete} {
		for i, op := range p.Ops {
			if op.Kind != kind {
				continue
			}
			f := PatchedFile{Kind: kind, Path: op.Path, Abs: abs[i][0]}
			if op.MoveTo != "" {
				f.Path, f.Abs = op.MoveTo, abs[i][1]
			}
			f.EOL = t.files[f.Abs].eol
			if !slices.ContainsFunc(out, func(o PatchedFile) bool { return o.Abs == f.Abs && o.Kind == f.Kind }) {
				out = append(out, f)
			}
		}
	}
	return out
}

// patchCommitHook, when set (by tests), is called once the files are prepared, with step
// -1, and then before each step of a commit, which fails with the error it returns.
var patchCommitHook func(step int) error

// commit writes the files the patch changes: see [ApplyPatch].
func (t *patchTree) commit() error {
	var changed []*fileState
	for _, abs := range t.order {
		if s := t.files[abs]; s.changed() {
			changed = append(changed, s)
		}
	}
	st := &staged{}
	defer st.discard()
	for _, s := range changed {
		if err := st.prepare(t.opts.Open, s); err != nil {
			return fmt.Errorf("cannot write %s: %s; no file was changed", s.abs, reason(err))
		}
	}
	if patchCommitHook != nil {
		if err := patchCommitHook(-1); err != nil {
			return err
		}
	}
	if err := t.unchanged(changed); err != nil {
		return err
	}
	return st.swap(t.opts.Open, changed)
}

// unchanged checks that every file read still holds what was read.
func (t *patchTree) unchanged(files []*fileState) error {
	for _, s := range files {
		if s.info == nil {
			continue
		}
		now, _, err := readRegular(t.opts.Open, s.abs, t.opts.MaxFileSize)
		if err != nil || !bytes.Equal(now, s.orig) {
			return errorf(ErrStale, "%s changed on disk while the patch was being applied (a command or another program wrote it); no file was changed: read it again and retry", s.abs)
		}
	}
	return nil
}

// staged holds what a commit has prepared: a finished temporary file for each file to
// write, and the open directory of each file to delete.
type staged struct {
	temps map[string]*tempFile
	dirs  []*os.File
}

func (st *staged) discard() {
	for _, t := range st.temps {
		t.discard()
	}
	for _, d := range st.dirs {
		d.Close()
	}
}

// prepare writes s's new content to a temporary file beside it, or opens the directory
// of a file to delete.
func (st *staged) prepare(open Opener, s *fileState) error {
	if st.temps == nil {
		st.temps = map[string]*tempFile{}
	}
	dirPath, base := filepath.Split(s.abs)
	var d *os.File
	var err error
	if s.exists {
		d, err = openDirMaking(open, filepath.Clean(dirPath))
	} else {
		d, err = open.open(filepath.Clean(dirPath), os.O_RDONLY|syscall.O_DIRECTORY)
	}
	if err != nil {
		return err
	}
	st.dirs = append(st.dirs, d)
	if !s.exists {
		return nil
	}
	tf, err := createTemp(fdOf(d), filepath.Clean(dirPath), base, s.modeOf)
	if err != nil {
		return err
	}
	st.temps[s.abs] = tf
	if err := writeAll(tf.f, s.data); err != nil {
		return err
	}
	if s.modeOf != nil {
		if dir, err := d.Stat(); err == nil {
			if _, err := keepOwnerAndMode(tf.f, s.modeOf, dir); err != nil {
				return err
			}
		}
	}
	return tf.finish()
}

// swap puts every prepared file in place and removes the files to delete, in order; when
// a step fails, it undoes the ones before it.
func (st *staged) swap(open Opener, files []*fileState) error {
	for i, s := range files {
		err := error(nil)
		if patchCommitHook != nil {
			err = patchCommitHook(i)
		}
		if err == nil {
			err = st.step(open, s)
		}
		if err != nil {
			return undo(open, files[:i], s.abs, err)
		}
	}
	return nil
}

// step writes or removes one file.
func (st *staged) step(open Opener, s *fileState) error {
	if s.exists {
		return st.temps[s.abs].rename(filepath.Base(s.abs), s.abs)
	}
	d, err := open.open(filepath.Dir(s.abs), os.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Unlinkat(fdOf(d), filepath.Base(s.abs), 0)
}

// undo puts back the files a failed commit changed before failing on path with err.
func undo(open Opener, done []*fileState, path string, err error) error {
	var stuck []string
	for i := len(done) - 1; i >= 0; i-- {
		s := done[i]
		var uerr error
		if s.info != nil {
			_, uerr = writeAtomic(open, s.abs, s.orig, s.info, writeAll)
		} else if d, derr := open.open(filepath.Dir(s.abs), os.O_RDONLY|syscall.O_DIRECTORY); derr == nil {
			uerr = unix.Unlinkat(fdOf(d), filepath.Base(s.abs), 0)
			d.Close()
		} else {
			uerr = derr
		}
		if uerr != nil {
			stuck = append(stuck, s.abs)
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("cannot write %s: %s; the patch was applied only in part, and these files could not be put back as they were: %s", path, reason(err), strings.Join(stuck, ", "))
	}
	return fmt.Errorf("cannot write %s: %s; the files changed before it were put back, so no file was changed", path, reason(err))
}
