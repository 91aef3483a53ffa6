//go:build linux

package search

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadKnown: a file the index holds fresh is read with the index's size and time; one
// that grew after all is read whole with its own time, and one that shrank as it is.
func TestReadKnown(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	const indexed = "0123456789"
	known := time.Unix(1, 2345).UnixNano() // what the index says, unlike the file's time
	for _, tc := range []struct {
		name, content, want string
		max                 int64
		ownTime             bool
		err                 error
	}{
		{"as indexed", indexed, indexed, 0, false, nil},
		{"grown", indexed + "abc", indexed + "abc", 0, true, nil},
		{"shrunk", "0123", "0123", 0, false, nil},
		{"emptied", "", "", 0, false, nil},
		{"too large", indexed, "", 9, false, errTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			fd, err := syscall.Open(p, syscall.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			var buf []byte
			data, mtime, err := readKnown(fd, &buf, int64(len(indexed)), known, tc.max)
			if !errors.Is(err, tc.err) || string(data) != tc.want {
				t.Fatalf("readKnown = %q, %v; want %q, %v", data, err, tc.want, tc.err)
			}
			if err != nil {
				return
			}
			want := time.Unix(0, known)
			if tc.ownTime {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				want = st.ModTime()
			}
			if !mtime.Equal(want) {
				t.Fatalf("time %v, want %v", mtime, want)
			}
			if err := syscall.Close(fd); err != syscall.EBADF {
				t.Fatalf("fd left open (close: %v)", err)
			}
		})
	}
}
