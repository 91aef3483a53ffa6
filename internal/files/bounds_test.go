package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// allocated returns how many bytes f allocates. Tests that use it do not run in parallel, so
// little else allocates meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A replace_all whose result would be far over the limit is refused before the result is
// built: 100,000 one-byte matches, each replaced by 2 KB, would take 200 MB.
func TestReplaceAllOverLimitAllocatesLittle(t *testing.T) {
	p := writeFile(t, "f.txt", strings.Repeat("a", 100_000)+"\n")
	var err error
	n := allocated(func() {
		_, err = Replace(t.Context(), p, "a", strings.Repeat("x", 2000), true, EditOptions{MaxFileSize: limit})
	})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Replace error = %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"200,000,001 bytes", "10,485,760-byte limit", "100000 occurrences", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n > 20<<20 {
		t.Errorf("refusing the edit allocated %d MB, want under 20 MB", n>>20)
	}
	if got := readBack(t, p); len(got) != 100_001 {
		t.Errorf("the file changed to %d bytes", len(got))
	}
}

// An insertion over the limit is refused with the size it would have made.
func TestInsertOverLimit(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "f.txt", "a\nb\n")
	_, err := Insert(p, 1, strings.Repeat("x", 20), EditOptions{MaxFileSize: 16})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "25 bytes, over the 16-byte limit") {
		t.Errorf("Insert error = %v, want ErrTooLarge saying 25 bytes over the 16-byte limit", err)
	}
}

// The closest-match diagnosis of a large old_str that misses is bounded in work and in
// length, and says when it was cut short. Unbounded, this case counts 20 million votes and
// quotes 20,000 lines.
func TestMissDiagnosisIsBounded(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "f.txt", strings.Repeat("x = 1\n", 100_000))
	old := strings.Repeat("x = 1\n", 20_000) + "nope\n"
	_, err := Replace(t.Context(), p, old, "y", false, EditOptions{MaxFileSize: limit})
	if !errors.Is(err, ErrNoMatch) {
		t.Fatalf("Replace error = %v, want ErrNoMatch", err)
	}
	msg := err.Error()
	for _, want := range []string{"cut short"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not say %q:\n%.2000s", want, msg)
		}
	}
	if len(msg) > 10_000 {
		t.Errorf("error is %d bytes long, want under 10,000", len(msg))
	}

	// A long old_str that is close to the file: the region is named whole but shown in part.
	var file, near []string
	for i := range 200 {
		file = append(file, fmt.Sprintf("line %d", i+1))
	}
	near = append(near, file[9:109]...)
	near[50] = "line sixty"
	p = writeFile(t, "g.txt", strings.Join(file, "\n")+"\n")
	_, err = Replace(t.Context(), p, strings.Join(near, "\n"), "y", false, EditOptions{MaxFileSize: limit})
	msg = fmt.Sprint(err)
	for _, want := range []string{"the closest text is at lines 10-109:\n", "    39\tline 39\n… (70 more lines not shown)", `line 60: file has "line 60"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "cut short") {
		t.Errorf("error says the search was cut short:\n%s", msg)
	}
}

// A request that ends stops the diagnosis, which then says it was cut short.
func TestMissDiagnosisStopsWithContext(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "f.txt", "a\nb\nc\n")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Replace(ctx, p, "a\nB\nc\n", "y", false, EditOptions{MaxFileSize: limit})
	if !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("Replace with an ended context: error = %v, want ErrNoMatch saying the search was cut short", err)
	}
	_, err = Replace(t.Context(), p, "a\nB\nc\n", "y", false, EditOptions{MaxFileSize: limit})
	if !errors.Is(err, ErrNoMatch) || strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "lines 1-3") {
		t.Errorf("Replace: error = %v, want ErrNoMatch showing lines 1-3, not cut short", err)
	}
}

// stopAfter is a context that ends on its own after its Err method has been asked n
// times: a request cancelled part way through a read, with no timing involved.
type stopAfter struct {
	context.Context
	cancel context.CancelFunc
	n      atomic.Int32
}

func newStopAfter(t *testing.T, n int32) *stopAfter {
	ctx, cancel := context.WithCancel(t.Context())
	c := &stopAfter{Context: ctx, cancel: cancel}
	c.n.Store(n)
	return c
}

func (c *stopAfter) Err() error {
	if c.n.Add(-1) < 0 {
		c.cancel()
	}
	return c.Context.Err()
}

// A view deep into a large sparse file stops reading when the request ends. Without that,
// it reads all 8 GiB of the file's hole looking for the range's start.
func TestViewStopsWhenTheRequestEnds(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "sparse.txt", strings.Repeat("text\n", 60_000))
	if err := os.Truncate(p, 8<<30); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	ctx := newStopAfter(t, 3)
	_, err := View(ctx, p, ViewOptions{Start: 1 << 30, End: 1<<30 + 10, MaxFileSize: limit})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the request ended") {
		t.Errorf("View with a request that ended = %v, want context.Canceled saying the request ended", err)
	}
}

// A listing stops between directories when the request ends.
func TestListStopsWhenTheRequestEnds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := List(newStopAfter(t, 2), nil, dir, 100, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("List with a request that ended = %v, want context.Canceled", err)
	}
}

// When the diagnosis runs out of budget, the lines that were counted are the distinctive
// ones: a large old_str of repeated lines still finds the one line that places it.
func TestClosestCountsRareLinesFirst(t *testing.T) {
	t.Parallel()
	var file, old []string
	for range 3000 {
		file = append(file, "}")
	}
	file = append(file, "func f() {", "\treturn 1")
	for range 3000 {
		file = append(file, "}")
	}
	for range 500 {
		old = append(old, "}")
	}
	old = append(old, "func f() {", "\treturn 2")
	start, score, cut := closest(t.Context(), file, old, 10_000)
	if start != 2500 || score == 0 || !cut {
		t.Errorf("closest = start %d, score %d, cut %v; want start 2500 (placing func f), cut", start, score, cut)
	}
	if start, _, cut := closest(t.Context(), file[:20], old[:5], 10_000); start != 0 || cut {
		t.Errorf("closest of a small old_str = start %d, cut %v; want 0, not cut", start, cut)
	}
}
