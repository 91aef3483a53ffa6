package session

import (
	"bytes"
	"testing"
)

func TestChanges(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	defer s.Close()
	if _, ok := s.LastChange("/a"); ok {
		t.Fatalf("LastChange on a new session found a change")
	}
	s.RecordChange(Change{Path: "/a", Old: []byte("1"), Existed: true})
	s.RecordChange(Change{Path: "/b", Old: []byte("x")})
	s.RecordChange(Change{Path: "/a", Old: []byte("2"), Existed: true})
	if c, ok := s.LastChange("/a"); !ok || string(c.Old) != "2" {
		t.Errorf("LastChange(/a) = %q, %v; want the latest change", c.Old, ok)
	}
	s.DropLastChange("/a")
	if c, ok := s.LastChange("/a"); !ok || string(c.Old) != "1" {
		t.Errorf("LastChange(/a) after a drop = %q, %v; want the earlier change", c.Old, ok)
	}
	// Past the byte bound the oldest changes go.
	big := bytes.Repeat([]byte("z"), maxChangeBytes/2+1)
	s.RecordChange(Change{Path: "/c", Old: big})
	s.RecordChange(Change{Path: "/d", Old: big})
	if _, ok := s.LastChange("/a"); ok {
		t.Errorf("the oldest change survived past the byte bound")
	}
	if _, ok := s.LastChange("/d"); !ok {
		t.Errorf("the newest change was dropped")
	}
	if s.edits.changeBytes > maxChangeBytes {
		t.Errorf("changes hold %d bytes, over the bound %d", s.edits.changeBytes, maxChangeBytes)
	}
	for range maxChanges + 5 {
		s.RecordChange(Change{Path: "/e"})
	}
	if n := len(s.edits.changes); n > maxChanges {
		t.Errorf("%d changes kept, over the bound %d", n, maxChanges)
	}
}

func TestRemember(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	defer s.Close()
	s.Remember("/a", []byte("one"))
	s.Remember("/a", []byte("two"))
	if got := s.Remembered("/a"); string(got) != "two" {
		t.Errorf("Remembered(/a) = %q, want the latest", got)
	}
	s.Remember("/a", make([]byte, maxSnapshotSize+1))
	if got := s.Remembered("/a"); got != nil {
		t.Errorf("Remembered(/a) kept a snapshot over the size bound, or the stale one")
	}
	chunk := make([]byte, maxSnapshotSize)
	for i := range maxSnapshots/maxSnapshotSize + 2 {
		s.Remember(string(rune('a'+i)), chunk)
	}
	if s.edits.snapBytes > maxSnapshots {
		t.Errorf("snapshots hold %d bytes, over the bound %d", s.edits.snapBytes, maxSnapshots)
	}
	if s.Remembered("a") != nil {
		t.Errorf("the oldest snapshot survived past the bound")
	}
}
