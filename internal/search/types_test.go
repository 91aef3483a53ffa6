package search

import (
	"slices"
	"strings"
	"testing"
)

// typeGlobs searches types by halving, which finds a name only if the list is sorted.
func TestTypesSortedAndUnique(t *testing.T) {
	t.Parallel()
	for i := 1; i < len(types); i++ {
		if types[i-1].name >= types[i].name {
			t.Errorf("types: %q comes before %q; keep the list sorted, each name once", types[i-1].name, types[i].name)
		}
	}
	for _, typ := range types {
		if got, ok := typeGlobs(typ.name); !ok || !slices.Equal(got, typ.globs) {
			t.Errorf("typeGlobs(%q) = %q, %v; want %q", typ.name, got, ok, typ.globs)
		}
	}
}

func TestTypeGlobs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"go", "GO", " Go\t"} {
		if got, ok := typeGlobs(name); !ok || !slices.Equal(got, []string{"*.go"}) {
			t.Errorf("typeGlobs(%q) = %q, %v; want [*.go]", name, got, ok)
		}
	}
	for _, name := range []string{"", "golang", "a", "zzz"} {
		if got, ok := typeGlobs(name); ok {
			t.Errorf("typeGlobs(%q) = %q; want no type", name, got)
		}
	}
	names := TypeNames()
	if len(names) != len(types) || !slices.IsSorted(names) {
		t.Errorf("TypeNames() = %q; want every name, sorted", names)
	}
	// Each short name the grep tool's description lists is a type, with its globs.
	for entry := range strings.SplitSeq(TypeTable(), "; ") {
		name, globs, _ := strings.Cut(entry, " ")
		if want, ok := typeGlobs(name); !ok || globs != strings.Join(want, ",") {
			t.Errorf("TypeTable lists %q, which typeGlobs gives as %q, %v", entry, want, ok)
		}
	}
}
