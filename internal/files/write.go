package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// writeFunc writes data to an open temporary file. Tests substitute one that fails part way,
// as a full disk would.
type writeFunc func(f *os.File, data []byte) error

func writeAll(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// writeAtomic replaces path with data: it writes a temporary file in the same directory,
// gives it old's mode and owner (a new file gets 0644 less the umask), syncs it and renames
// it over path. On any failure path is left as it was and the temporary file is removed.
//
// The one sync, of the data before the rename, is what makes the write crash safe: after a
// crash path holds the old content or the new, each in full, never a torn or empty file.
// The directory is not synced: that would only make the rename itself durable (so that an
// edit made just before a crash is not lost to the old content), at the cost of a second
// disk flush per edit.
func writeAtomic(path string, data []byte, old fs.FileInfo, write writeFunc) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("cannot write %s: %s; the file was left unchanged", path, reason(err))
		}
	}()
	dir, base := filepath.Split(path)
	if len(base) > 200 {
		base = base[:200] // keep the temporary name within NAME_MAX
	}
	// Root may write anywhere; a directory no one may write is still taken as read-only.
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%w: the directory %s is read-only (mode %04o)", fs.ErrPermission, filepath.Clean(dir), st.Mode().Perm())
	}
	perm := fs.FileMode(0o644)
	if old != nil {
		perm = old.Mode().Perm()
	}
	var f *os.File
	var tmp string
	for range 100 {
		tmp = filepath.Join(dir, "."+base+"."+randomHex(6)+".tmp")
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f, data); err != nil {
		return err
	}
	if old != nil {
		// OpenFile's mode went through the umask; the old mode (with setuid, setgid and
		// sticky bits) must not.
		if err := f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return err
		}
		if st, ok := old.Sys().(*syscall.Stat_t); ok {
			_ = f.Chown(int(st.Uid), int(st.Gid)) // works only for root or the same owner; best effort
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		done = true
		return err
	}
	done = true
	return nil
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

// writable refuses a file the process may not write, rather than silently replacing a
// read-only file through the rename.
func writable(path string, info fs.FileInfo) error {
	if info.Mode().Perm()&0o222 == 0 {
		return errorf(ErrUnsupported, "%s is read-only (mode %04o); change its mode with bash (chmod u+w) first if it should be edited", path, info.Mode().Perm())
	}
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return errorf(ErrUnsupported, "%s is not writable (mode %04o): %s; change its mode with bash (chmod u+w) first if it should be edited",
			path, info.Mode().Perm(), reason(err))
	}
	return nil
}

// Created is what [Create] did.
type Created struct {
	Bytes   int
	Existed bool        // an existing file was overwritten
	Mode    fs.FileMode // the mode the file has now
	// Old is the overwritten content, when asked for and the file was within the size limit.
	Old     []byte
	OldKept bool
}

// Create writes content to path, creating missing parent directories, or overwrites the
// regular file there keeping its mode. New files get mode 0644 less the umask. With keepOld,
// the overwritten content is returned for undo.
func Create(path string, content []byte, maxFileSize int64, keepOld bool) (*Created, error) {
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
		c.Existed, c.Mode = true, info.Mode().Perm()
		if keepOld && info.Size() <= maxFileSize {
			if old, _, err := readRegular(path, maxFileSize); err == nil {
				c.Old, c.OldKept = old, true
			}
		}
	case errors.Is(err, syscall.ENOTDIR):
		return nil, fileInTheWay(path)
	case errors.Is(err, fs.ErrNotExist):
		info = nil
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			if errors.Is(err, syscall.ENOTDIR) {
				return nil, fileInTheWay(path)
			}
			return nil, fmt.Errorf("cannot create the parent directories of %s: %s", path, reason(err))
		}
	default:
		return nil, err
	}
	if err := writeAtomic(path, content, info, writeAll); err != nil {
		return nil, err
	}
	if !c.Existed {
		if st, err := os.Stat(path); err == nil {
			c.Mode = st.Mode().Perm()
		}
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
func Restore(path string, old []byte, existed bool, wrote Digest, maxFileSize int64) error {
	defer lockPath(path)()
	data, info, err := readRegular(path, maxFileSize)
	if err != nil {
		return err
	}
	if ContentDigest(data) != wrote {
		return errorf(ErrStale, "%s has changed since that edit, so it cannot be undone safely; view the file and fix it with str_replace", path)
	}
	if err := writable(path, info); err != nil {
		return err
	}
	if !existed {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("removing %s: %s", path, reason(err))
		}
		return nil
	}
	return writeAtomic(path, old, info, writeAll)
}
