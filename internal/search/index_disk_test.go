package search

import (
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// TestFileWithManyTrigramsIndexed: a text file of more than 65,536 distinct trigrams is
// held by the index, and a search for a string in it is answered from the index alone.
func TestFileWithManyTrigramsIndexed(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 12))
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(' ' + rng.IntN(95))
	}
	copy(big[len(big)/2:], "the rareIdent here")
	os.WriteFile(filepath.Join(root, "big.txt"), big, 0o644)
	os.WriteFile(filepath.Join(root, "small.txt"), []byte("nothing\n"), 0o644)
	x, err := BuildIndex(t.Context(), openScope{}, root, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := x.files[filepath.Join(root, "big.txt")]; !ok || x.Files() != 2 || x.Postings() <= 1<<16 {
		t.Fatalf("index of %d files, %d postings: big.txt not held", x.Files(), x.Postings())
	}
	ix := &Indexes{}
	ix.install(root, x)
	res, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent", Indexes: ix, Mode: Count})
	if err != nil || res.Index != Indexed || res.MatchedFiles != 1 {
		t.Fatalf("grep = %+v, %v; want big.txt, from the index", res, err)
	}
}

// TestSavedIndexReloaded: an index saved and loaded again holds the same files and gives
// the same candidates.
func TestSavedIndexReloaded(t *testing.T) {
	tinyBlocks(t)
	rng := rand.New(rand.NewPCG(13, 14))
	root, cache := t.TempDir(), t.TempDir()
	for range 80 {
		writeRandomFile(t, rng, randomPath(rng, root))
	}
	x, err := buildIndex(t.Context(), openScope{}, root, "", cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Save(cache); err != nil {
		t.Fatal(err)
	}
	y, err := loadIndex(cache, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(y.files) != len(x.files) {
		t.Fatalf("%d files loaded, %d saved", len(y.files), len(x.files))
	}
	blocks := 0
	for p, f := range x.files {
		if !reflect.DeepEqual(y.files[p], f) {
			t.Fatalf("%s: loaded %+v, saved %+v", p, y.files[p], f)
		}
		if f.blk != nil {
			blocks++
		}
	}
	if blocks == 0 {
		t.Fatal("no file of more than one block")
	}
	for _, pat := range []string{"rareIdent", "a", "(?i)RAREIDENT|zzz", "abc.*xyz"} {
		px, py := planIndex(x, pat, false, false), planIndex(y, pat, false, false)
		if (px == nil) != (py == nil) || px != nil && fmt.Sprint(px.cand) != fmt.Sprint(py.cand) {
			t.Fatalf("%q: candidates differ after loading", pat)
		}
	}
	// An index built without a cache directory is saved by copying its file.
	z, err := BuildIndex(t.Context(), openScope{}, root, "")
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := z.Save(other); err != nil {
		t.Fatal(err)
	}
	if w, err := loadIndex(other, root); err != nil || len(w.files) != len(x.files) {
		t.Fatalf("copy saved: %v", err)
	}
}

// oldTable is the file table of root as it was kept before files had blocks, one id each.
func oldTable(root string, files map[string]indexedFile) (extra []byte, ids int) {
	paths := slices.Sorted(maps.Keys(files))
	out := binary.AppendUvarint(nil, uint64(len(root)))
	out = append(out, root...)
	out = binary.AppendUvarint(out, uint64(len(paths)))
	total := 0
	for _, p := range paths {
		total += len(p)
	}
	out = binary.AppendUvarint(out, uint64(total))
	for _, p := range paths {
		f := files[p]
		out = binary.AppendUvarint(out, 0)
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
		out = binary.AppendVarint(out, f.size)
		out = binary.AppendVarint(out, f.mtime)
		out = binary.AppendVarint(out, f.ctime)
		out = binary.AppendUvarint(out, f.ino)
		out = append(out, 0)
	}
	return out, len(paths)
}

// TestBadSavedIndexRebuilt: a saved index cut short, damaged, of the earlier gob format,
// or whose file table is of the format before blocks, is not used: it is removed, and the tree's index is built again.
func TestBadSavedIndexRebuilt(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	root := t.TempDir()
	for range 40 {
		writeRandomFile(t, rng, randomPath(rng, root))
	}
	for _, bad := range []string{"cut", "damaged", "gob", "old file", "old table"} {
		t.Run(bad, func(t *testing.T) {
			cache := t.TempDir()
			x, err := buildIndex(t.Context(), openScope{}, root, "", cache, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Save(cache); err != nil {
				t.Fatal(err)
			}
			path := indexPath(cache, root)
			data, _ := os.ReadFile(path)
			switch bad {
			case "cut":
				data = data[:len(data)-7]
			case "damaged":
				data[len(data)-30] ^= 1
			case "gob":
				f, _ := os.Create(path)
				gob.NewEncoder(f).Encode(map[string]int{"Format": 1})
				f.Close()
				data, _ = os.ReadFile(path)
			case "old file":
				// A gob index of the earlier format, where it was kept.
				os.Rename(path, oldIndexPath(cache, root))
				os.WriteFile(oldIndexPath(cache, root), []byte("\x1f\xff\x81gob of format 1"), 0o600)
				data = nil
			case "old table":
				extra, ids := oldTable(root, x.files)
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				w := trigram.NewWriter(f, 1<<20)
				for id := range ids {
					w.Add(uint32(id), nil)
				}
				if _, err := w.Finish(extra); err != nil {
					t.Fatal(err)
				}
				f.Close()
				data = nil
			}
			if data != nil {
				os.WriteFile(path, data, 0o600)
			}
			if _, err := loadIndex(cache, root); err == nil {
				t.Fatal("a bad index was loaded")
			}
			for _, p := range []string{path, oldIndexPath(cache, root)} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Fatalf("%s kept: %v", filepath.Base(p), err)
				}
			}
			ix := &Indexes{MinFiles: 1, Dir: cache}
			defer ix.Close()
			if _, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent", Indexes: ix}); err != nil {
				t.Fatal(err)
			}
			ix.Wait()
			if got, _, _ := ix.lookup(root); got == nil || got.Files() != x.Files() {
				t.Fatal("no index built again")
			}
			if _, err := loadIndex(cache, root); err != nil {
				t.Fatalf("the index built again was not saved: %v", err)
			}
		})
	}
}
