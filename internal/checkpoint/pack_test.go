package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// packs returns the packs in the journal of the store in state, and what each holds.
func packs(t *testing.T, state string) map[string][]packed {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(state, "journal", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]packed{}
	for _, p := range names {
		_, contents, err := readPack(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = contents
	}
	return out
}

// loose returns the digests of the contents kept as files of their own.
func loose(t *testing.T, state string) map[string]bool {
	t.Helper()
	dir := filepath.Join(state, "objects")
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[strings.ReplaceAll(rel, "/", "")] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A call's new contents go into one pack with its record, not one file each; a restarted
// Boris finds them there and rewinds with them.
func TestPackReadAfterRestart(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	sh(t, root, crashBefore)
	before := tree(t, root)
	tr := openTracker(t, root, state)
	baseline := loose(t, state)
	sh(t, root, crashMutation)
	after := tree(t, root)
	cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil {
		t.Fatalf("Capture = %v, %v", cp, err)
	}
	if got := loose(t, state); len(got) != len(baseline) {
		t.Errorf("the capture made %d loose contents, want none", len(got)-len(baseline))
	}
	ps := packs(t, state)
	if len(ps["0000000001.pack"]) != 12 { // 10 rewritten files, "new", "in"
		t.Errorf("packs = %v, want cp-1's with 12 contents", ps)
	}
	if _, err := os.Stat(filepath.Join(state, "journal", "0000000001.json")); !os.IsNotExist(err) {
		t.Errorf("cp-1 has a .json record too: %v", err)
	}
	// The packed contents are read back, before and after a restart.
	for _, c := range ps["0000000001.pack"] {
		if _, err := tr.Store().Get(c.digest); err != nil {
			t.Errorf("Get(%.12s) = %v", c.digest, err)
		}
	}
	size := tr.Store().Size()
	tr.Close()
	tr = openTracker(t, root, state)
	if got := tr.Store().Size(); got != size {
		t.Errorf("the store's size after a restart = %d, want %d", got, size)
	}
	if got := loose(t, state); len(got) != len(baseline) { // the baseline found them packed
		t.Errorf("the restart made %d loose contents, want none", len(got)-len(baseline))
	}
	if _, err := tr.Rewind(t.Context(), "cp-1", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, root)); diff != "" {
		t.Fatalf("after rewind to cp-1 (-want +got):\n%s", diff)
	}
	// The rescue checkpoint's "after" contents are the packed ones.
	tr.Close()
	tr = openTracker(t, root, state)
	if _, err := tr.Rewind(t.Context(), "cp-2", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(after, tree(t, root)); diff != "" {
		t.Fatalf("after undoing the rewind (-want +got):\n%s", diff)
	}
}

// A content already kept, loose or in an earlier pack, is not packed again, before or
// after a restart.
func TestPackDedupe(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	sh(t, root, `echo base > a; echo base > b`)
	tr := openTracker(t, root, state)
	sh(t, root, `echo one > a; echo one > b; echo base > c`) // one new content, twice; one loose
	if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil {
		t.Fatalf("Capture = %v, %v", cp, err)
	}
	sh(t, root, `echo two > a; echo one > d`) // one new, one in cp-1's pack
	if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil {
		t.Fatalf("Capture = %v, %v", cp, err)
	}
	tr.Close()
	tr = openTracker(t, root, state)
	sh(t, root, `echo one > e; echo two > f; echo base > g; echo three > h`) // one new
	if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil {
		t.Fatalf("Capture = %v, %v", cp, err)
	}
	got := map[string][]string{}
	for name, cs := range packs(t, state) {
		for _, c := range cs {
			got[name] = append(got[name], c.digest)
		}
	}
	want := map[string][]string{
		"0000000001.pack": {Digest([]byte("one\n"))},
		"0000000002.pack": {Digest([]byte("two\n"))},
		"0000000003.pack": {Digest([]byte("three\n"))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("packs (-want +got):\n%s", diff)
	}
	if l := loose(t, state); len(l) != 1 || !l[Digest([]byte("base\n"))] {
		t.Errorf("loose contents = %v, want only the baseline's", l)
	}
}

// Packed contents count towards the store's limit, after a restart too; past it, a
// capture lists the change as not restorable and packs nothing. Nothing kept is dropped.
func TestPackStoreLimit(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	sh(t, root, `printf 1234 > a`)
	before := tree(t, root)
	open := func() *Tracker {
		tr, err := Open(Options{Root: root, Dir: state, MaxStore: 10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		if err := tr.WaitReady(t.Context()); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := open()
	sh(t, root, `printf 567890 > b`)
	cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil || len(cp.Unrestorable()) > 0 {
		t.Fatalf("Capture = %+v, %v; want b kept", cp, err)
	}
	tr.Close()
	tr = open()
	if got := tr.Store().Size(); got != 10 {
		t.Errorf("Size after a restart = %d, want 10 (4 loose, 6 packed)", got)
	}
	sh(t, root, `printf x > c`)
	cp, err = tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil {
		t.Fatalf("Capture = %v, %v", cp, err)
	}
	if u := cp.Unrestorable(); len(u) != 0 {
		t.Errorf("unrestorable before: %v", u) // c was absent before
	}
	if cp.Changes[0].After.Lost == "" {
		t.Errorf("c was kept past the store's limit")
	}
	if ps := packs(t, state); len(ps["0000000002.pack"]) != 0 || len(ps["0000000001.pack"]) != 1 {
		t.Errorf("packs = %v", ps)
	}
	if _, err := tr.Rewind(t.Context(), "cp-1", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, root)); diff != "" {
		t.Errorf("after rewind (-want +got):\n%s", diff)
	}
}

// A store written before packs (loose contents, .json records) is still read and rewound.
func TestLooseStoreStillRewinds(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	sh(t, root, `echo old > a; mkdir d; echo x > d/x`)
	before := tree(t, root)
	tr := openTracker(t, root, state)
	tr.Close()
	// What the earlier version wrote for one call: its new content loose, its record alone.
	s, err := OpenStore(filepath.Join(state, "objects"), 0)
	if err != nil {
		t.Fatal(err)
	}
	newA, err := s.Put([]byte("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	j := journal{dir: filepath.Join(state, "journal"), store: s}
	c := &Checkpoint{ID: "cp-1", Seq: 1, Tool: "bash", Changes: []Change{
		{Path: "a", Before: State{Kind: File, Mode: 0o644, Blob: Digest([]byte("old\n")), Size: 4}, After: State{Kind: File, Mode: 0o644, Blob: newA, Size: 4}},
		{Path: "d/x", Before: State{Kind: File, Mode: 0o644, Blob: Digest([]byte("x\n")), Size: 2}},
	}}
	if err := j.write(c, false); err != nil {
		t.Fatal(err)
	}
	sh(t, root, `echo new > a; rm d/x`)
	tr = openTracker(t, root, state)
	if got := tr.List(0); len(got) != 1 || got[0].ID != "cp-1" {
		t.Fatalf("List = %v, want cp-1", got)
	}
	if _, err := tr.Rewind(t.Context(), "cp-1", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, root)); diff != "" {
		t.Fatalf("after rewind (-want +got):\n%s", diff)
	}
}

// A pack cut short (a power loss: packs are not synced) is set aside at the next start:
// the others are read, and the next checkpoint takes its number.
func TestTornPackIgnored(t *testing.T) {
	t.Parallel()
	for _, cut := range []int{1, 5, packHead + 10, -len(packEnd), -1} {
		root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
		sh(t, root, `echo 0 > a`)
		before := tree(t, root)
		tr := openTracker(t, root, state)
		sh(t, root, `echo 1 > a`)
		if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil {
			t.Fatalf("Capture = %v, %v", cp, err)
		}
		sh(t, root, `echo 2 > a`)
		if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil {
			t.Fatalf("Capture = %v, %v", cp, err)
		}
		tr.Close()
		p := filepath.Join(state, "journal", "0000000002.pack")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if cut <= 0 {
			cut += len(data)
		}
		if err := os.WriteFile(p, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		tr = openTracker(t, root, state)
		if got := tr.List(0); len(got) != 1 || got[0].ID != "cp-1" {
			t.Fatalf("cut at %d: List = %v, want cp-1 alone", cut, got)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("cut at %d: the torn pack is still there: %v", cut, err)
		}
		sh(t, root, `echo 3 > a`)
		if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil || cp.ID != "cp-2" {
			t.Fatalf("cut at %d: Capture = %v, %v; want cp-2", cut, cp, err)
		}
		if _, err := tr.Rewind(t.Context(), "cp-1", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, tree(t, root)); diff != "" {
			t.Errorf("cut at %d: after rewind (-want +got):\n%s", cut, diff)
		}
	}
}

// A packed content that does not match its digest is never returned.
func TestPackedContentDamaged(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	tr := openTracker(t, root, state)
	sh(t, root, `echo packed > a`)
	if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil {
		t.Fatalf("Capture = %v, %v", cp, err)
	}
	tr.Close()
	p := filepath.Join(state, "journal", "0000000001.pack")
	c := packs(t, state)["0000000001.pack"][0]
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[c.off] ^= 1
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tr = openTracker(t, root, state)
	if got, err := tr.Store().Get(c.digest); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Get of a damaged packed content = %q, %v; want it refused as damaged", got, err)
	}
}
