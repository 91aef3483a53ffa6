package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestStorePutGet(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "objects")
	s, err := OpenStore(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	d1, err := s.Put([]byte("hello\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := s.Put([]byte("hello\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 || s.Size() != 7 {
		t.Errorf("Put twice = %s, %s, size %d; want one content of 7 bytes", d1, d2, s.Size())
	}
	got, err := s.Get(d1)
	if err != nil || string(got) != "hello\r\n" {
		t.Errorf("Get = %q, %v", got, err)
	}
	// A damaged content is never returned.
	if err := os.WriteFile(s.path(d1), []byte("hellO\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d1); err == nil {
		t.Error("Get of a damaged content succeeded")
	}
	// Reopened, the store counts what it holds and drops what a killed writer left.
	if err := os.WriteFile(s.path(d1)+tempMark+"9", []byte("xx"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenStore(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Size() != 7 {
		t.Errorf("reopened size = %d, want 7", s2.Size())
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("store mode = %v, %v; want 0700", info.Mode(), err)
	}
}

func TestStoreFull(t *testing.T) {
	t.Parallel()
	s, err := OpenStore(t.TempDir(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put([]byte("12345678")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put([]byte("abcdefgh")); !errors.Is(err, ErrStoreFull) {
		t.Errorf("Put past the limit = %v, want ErrStoreFull", err)
	}
}

func TestJournalRecovery(t *testing.T) {
	t.Parallel()
	j := journal{dir: t.TempDir()}
	if err := j.write(&Checkpoint{ID: ID(1), Seq: 1, Tool: "bash"}, true); err != nil {
		t.Fatal(err)
	}
	// A write killed before its rename leaves a temporary file, never a half record.
	if err := os.WriteFile(j.name(2)+".tmp", []byte(`{"id":"cp-2","se`), 0o600); err != nil {
		t.Fatal(err)
	}
	list, _, err := j.load()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "cp-1" {
		t.Errorf("load = %v, want cp-1 alone", list)
	}
	if _, err := os.Stat(j.name(2) + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}
