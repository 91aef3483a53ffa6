package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeFunc writes data to an open temporary file. Tests substitute one that fails part way,
// as a full disk would.
type writeFunc func(f *os.File, data []byte) error

func writeAll(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// writeAtomic replaces path with data: it writes a temporary file in the same directory,
// gives it old's owner and then its mode (a new file gets 0644 less the umask), syncs it and
// renames it over path. The directory is opened once, through open, and the temporary file
// is created and renamed inside that open directory, so a directory swapped for a symlink
// meanwhile cannot redirect the write. On any failure path is left as it was and the
// temporary file is removed. lost says how old's mode could not be kept, if it could not.
//
// The one sync, of the data before the rename, is what makes the write crash safe: after a
// crash path holds the old content or the new, each in full, never a torn or empty file.
// The directory is not synced: that would only make the rename itself durable (so that an
// edit made just before a crash is not lost to the old content), at the cost of a second
// disk flush per edit. Nothing else is asked of the disk, and the owner and mode are only
// set when the new file did not get them when it was created.
func writeAtomic(open Opener, path string, data []byte, old fs.FileInfo, write writeFunc) (lost string, err error) {
	dirPath, base := filepath.Split(path)
	dirPath = filepath.Clean(dirPath)
	d, err := open.open(dirPath, os.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return "", err // a refusal keeps its kind
	}
	defer d.Close()
	dir, statErr := d.Stat()
	if statErr == nil {
		if err := dirWritable(dirPath, dir); err != nil {
			return "", err
		}
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("cannot write %s: %s; the file was left unchanged", path, reason(err))
		}
	}()
	t, err := createTemp(fdOf(d), dirPath, base, old)
	if err != nil {
		return "", err
	}
	defer t.discard()
	if err := write(t.f, data); err != nil {
		return "", err
	}
	if old != nil {
		if lost, err = keepOwnerAndMode(t.f, old, dir); err != nil {
			return "", err
		}
	}
	return lost, t.commit(base, path)
}

// tempFile is the temporary file of [writeAtomic], in its open directory.
type tempFile struct {
	f    *os.File
	dfd  int    // the directory
	name string // in the directory
	done bool   // renamed, or removed
}

// createTemp creates a temporary file for base in the directory dfd (at dirPath), with
// old's permissions (through the umask), or 0644 for a new file.
func createTemp(dfd int, dirPath, base string, old fs.FileInfo) (*tempFile, error) {
	short := base
	if len(short) > 200 {
		short = short[:200] // keep the temporary name within NAME_MAX
	}
	perm := uint32(0o644)
	if old != nil {
		perm = uint32(old.Mode().Perm())
	}
	var fd int
	var name string
	var err error
	for range 100 {
		name = "." + short + "." + randomHex(6) + ".tmp"
		fd, err = unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: filepath.Join(dirPath, name), Err: err}
	}
	return &tempFile{f: os.NewFile(uintptr(fd), filepath.Join(dirPath, name)), dfd: dfd, name: name}, nil
}

// commit syncs the temporary file's data to the disk, then renames it over base.
func (t *tempFile) commit(base, path string) error {
	if err := t.finish(); err != nil {
		return err
	}
	return t.rename(base, path)
}

// finish syncs the temporary file's data to the disk and closes it.
func (t *tempFile) finish() error {
	if err := t.f.Sync(); err != nil {
		return err
	}
	return t.f.Close()
}

// rename renames the finished temporary file over base, or removes it if it cannot.
func (t *tempFile) rename(base, path string) error {
	t.done = true
	if err := unix.Renameat(t.dfd, t.name, t.dfd, base); err != nil {
		_ = unix.Unlinkat(t.dfd, t.name, 0)
		return &os.LinkError{Op: "rename", Old: t.name, New: path, Err: err}
	}
	return nil
}

// discard closes and removes the temporary file unless it was committed.
func (t *tempFile) discard() {
	if !t.done {
		t.f.Close()
		_ = unix.Unlinkat(t.dfd, t.name, 0)
	}
}

// keepOwnerAndMode gives f, new in the directory dir, old's owner and then old's mode,
// where it does not have them already. It returns how the mode could not be kept, if the
// system would not keep some bits for this user.
func keepOwnerAndMode(f *os.File, old, dir fs.FileInfo) (lost string, err error) {
	// Owner first: a change of owner clears setuid and setgid, so the mode comes after.
	if st, ok := old.Sys().(*syscall.Stat_t); ok && !ownedAsCreated(st, dir) {
		_ = f.Chown(int(st.Uid), int(st.Gid)) // works only for root or the same owner; best effort
	}
	// The file was created with old's permissions through the umask; the old mode (with
	// setuid, setgid and sticky bits) must not go through it.
	want := old.Mode() & keptBits
	st, err := f.Stat()
	if err == nil && st.Mode()&keptBits == want {
		return "", nil
	}
	if err := f.Chmod(want); err != nil {
		return "", err
	}
	if st, err := f.Stat(); err == nil && st.Mode()&keptBits != want {
		return fmt.Sprintf("its mode was %s and is now %s: the system would not keep %s for this user", Octal(want), Octal(st.Mode()&keptBits), lostBits(want&^st.Mode())), nil
	}
	return "", nil
}

// ownedAsCreated reports whether a file this process creates in dir gets the owner in
// st: this process's effective user, and its effective group, or dir's group when dir
// is setgid.
func ownedAsCreated(st *syscall.Stat_t, dir fs.FileInfo) bool {
	gid := uint32(os.Getegid())
	if dir == nil {
		return false
	}
	if dst, ok := dir.Sys().(*syscall.Stat_t); ok && dir.Mode()&fs.ModeSetgid != 0 {
		gid = dst.Gid
	} else if !ok {
		return false
	}
	return st.Uid == uint32(os.Geteuid()) && st.Gid == gid
}

// fdOf returns f's descriptor without putting it in blocking mode, as Fd does (two
// fcntl calls, which a directory does not need).
func fdOf(f *os.File) int {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(p uintptr) { fd = int(p) })
	}
	if fd < 0 {
		fd = int(f.Fd())
	}
	return fd
}

// keptBits are the mode bits a rewrite keeps.
const keptBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// Octal writes a file mode as chmod takes it, with setuid (4000), setgid (2000) and sticky
// (1000) bits: 0644, 4755.
func Octal(m fs.FileMode) string {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return fmt.Sprintf("%04o", v)
}

func lostBits(m fs.FileMode) string {
	var names []string
	if m&fs.ModeSetuid != 0 {
		names = append(names, "setuid")
	}
	if m&fs.ModeSetgid != 0 {
		names = append(names, "setgid")
	}
	if m&fs.ModeSticky != 0 {
		names = append(names, "sticky")
	}
	if len(names) == 0 {
		return "those bits"
	}
	return strings.Join(names, " and ")
}

// openDirMaking opens the directory dir through open, creating it and its missing parents
// first. Each missing directory is made inside its parent's open directory and opened from
// there without following a symlink, so none can be made outside what open allows; none is
// made in a directory that [dirWritable] refuses.
func openDirMaking(open Opener, dir string) (*os.File, error) {
	var missing []string
	cur := dir
	var d *os.File
	for {
		var err error
		d, err = open.open(cur, os.O_RDONLY|syscall.O_DIRECTORY)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return nil, err
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
	if len(missing) > 0 {
		if err := openDirWritable(d, cur); err != nil {
			d.Close()
			return nil, err
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		name := missing[i]
		dfd := int(d.Fd())
		if err := unix.Mkdirat(dfd, name, 0o755); err != nil && err != unix.EEXIST {
			d.Close()
			return nil, &fs.PathError{Op: "mkdir", Path: filepath.Join(cur, name), Err: err}
		}
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		d.Close()
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(cur, name), Err: err}
		}
		cur = filepath.Join(cur, name)
		d = os.NewFile(uintptr(fd), cur)
	}
	return d, nil
}

// reason is the OS's explanation in err, without the path it repeats.
func reason(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	case errors.Is(err, fs.ErrPermission):
		return err.Error()
	}
	return err.Error()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dirWritable refuses a directory no one may write (info is its own), to create, replace or
// remove a file in it. Root may write anywhere, but a read-only checkout stays read-only.
func dirWritable(path string, info fs.FileInfo) error {
	if info.Mode().Perm()&0o222 == 0 {
		return &ReadOnlyError{Path: path, Mode: info.Mode().Perm(), Dir: true}
	}
	return nil
}

// openDirWritable is [dirWritable] of the open directory d, at path.
func openDirWritable(d *os.File, path string) error {
	info, err := d.Stat()
	if err != nil {
		return err
	}
	return dirWritable(path, info)
}

// canWriteIn refuses, by [dirWritable], to create, replace or remove a file in dir, or to
// create dir when it is missing in the nearest of its parents that exists. An error opening
// them is left for the write to report.
func canWriteIn(open Opener, dir string) error {
	for {
		d, err := open.open(dir, os.O_RDONLY|syscall.O_DIRECTORY)
		if err == nil {
			defer d.Close()
			return openDirWritable(d, dir)
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return nil
		}
		dir = parent
	}
}

// writable refuses a file the process may not write, rather than silently replacing a
// read-only file through the rename.
func writable(path string, info fs.FileInfo) error {
	if info.Mode().Perm()&0o222 == 0 {
		return &ReadOnlyError{Path: path, Mode: info.Mode().Perm()}
	}
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return &ReadOnlyError{Path: path, Mode: info.Mode().Perm(), Reason: reason(err)}
	}
	return nil
}

// Created is what [Create] did.
type Created struct {
	Bytes   int
	Existed bool        // an existing file was overwritten
	Mode    fs.FileMode // the mode the file has now, with setuid, setgid and sticky bits
	// ModeLost says how an overwritten file's mode could not be kept, when it could not.
	ModeLost string
	// Held is as in [Edit], for an overwritten file.
	Held string
	// Old is the overwritten content, when asked for and the file was within the size limit.
	Old     []byte
	OldKept bool
}

// Create writes content to path, creating missing parent directories, or overwrites the
// regular file there keeping its mode. New files get mode 0644 less the umask. With keepOld,
// the overwritten content is returned for undo.
func Create(open Opener, path string, content []byte, maxFileSize int64, keepOld bool) (*Created, error) {
	if int64(len(content)) > maxFileSize {
		return nil, errorf(ErrTooLarge, "content is %s bytes, over the %s-byte limit (--max-file-size); nothing was written",
			thousands(int64(len(content))), thousands(maxFileSize))
	}
	defer lockPath(path)()
	c := &Created{Bytes: len(content), Mode: 0o644}
	info, err := os.Stat(path)
	switch {
	case err == nil:
		if err := notRegular(path, info.Mode()); err != nil {
			return nil, err
		}
		if err := writable(path, info); err != nil {
			return nil, err
		}
		c.Existed, c.Mode = true, info.Mode()&keptBits
		if keepOld && info.Size() <= maxFileSize {
			if old, _, err := readRegular(open, path, maxFileSize); err == nil {
				c.Old, c.OldKept = old, true
			}
		}
	case errors.Is(err, syscall.ENOTDIR):
		return nil, fileInTheWay(path)
	case errors.Is(err, fs.ErrNotExist):
		info = nil
		d, err := openDirMaking(open, filepath.Dir(path))
		if err != nil {
			if errors.Is(err, syscall.ENOTDIR) {
				return nil, fileInTheWay(path)
			}
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("cannot create the parent directories of %s: %s", path, reason(err))
			}
			return nil, err
		}
		d.Close()
	default:
		return nil, err
	}
	lost, err := writeAtomic(open, path, content, info, writeAll)
	if err != nil {
		return nil, err
	}
	c.ModeLost = lost
	if info != nil {
		c.Held = heldForWriting(path, info)
	}
	if f, err := open.open(path, os.O_RDONLY|syscall.O_NONBLOCK); err == nil {
		if st, err := f.Stat(); err == nil {
			c.Mode = st.Mode() & keptBits
		}
		f.Close()
	}
	return c, nil
}

// fileInTheWay explains that path cannot be created because one of its parents is a file.
func fileInTheWay(path string) error {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if info, err := os.Stat(dir); err == nil && !info.IsDir() {
			return errorf(ErrInvalid, "cannot create %s: %s is a file, not a directory; choose another path, or remove or rename %s first",
				path, dir, filepath.Base(dir))
		}
		if next := filepath.Dir(dir); next == dir {
			return errorf(ErrInvalid, "cannot create %s: one of its parents is not a directory", path)
		}
	}
}

// Restore undoes an edit: if path still holds exactly what the edit wrote (digest wrote), it
// puts back old, or removes the file when the edit created it (existed false).
func Restore(open Opener, path string, old []byte, existed bool, wrote Digest, maxFileSize int64) error {
	defer lockPath(path)()
	data, info, err := readRegular(open, path, maxFileSize)
	if err != nil {
		return err
	}
	if ContentDigest(data) != wrote {
		return errorf(ErrStale, "%s has changed since that edit, so it cannot be undone safely", path)
	}
	if err := writable(path, info); err != nil {
		return err
	}
	if !existed {
		d, err := open.open(filepath.Dir(path), os.O_RDONLY|syscall.O_DIRECTORY)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := openDirWritable(d, filepath.Dir(path)); err != nil {
			return err
		}
		if err := unix.Unlinkat(int(d.Fd()), filepath.Base(path), 0); err != nil {
			return fmt.Errorf("removing %s: %s", path, reason(err))
		}
		return nil
	}
	_, err = writeAtomic(open, path, old, info, writeAll)
	return err
}
