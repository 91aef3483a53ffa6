package procfs

import (
	"os"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Stat
		ok   bool
	}{
		{"asleep", "42 (bash) S 1 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 7001 0 0", Stat{PID: 42, PPID: 1, PGID: 42, SID: 40, Comm: "bash", Start: 7001, State: 'S'}, true},
		{"name with spaces and parentheses", "42 (a) b (c) Z 7 8 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12 0 0", Stat{PID: 42, PPID: 7, PGID: 8, SID: 9, Comm: "a) b (c", Start: 12, State: 'Z', Zombie: true}, true},
		{"dead", "42 (x) X 7 8 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12 0 0", Stat{PID: 42, PPID: 7, PGID: 8, SID: 9, Comm: "x", Start: 12, State: 'X', Zombie: true}, true},
		{"no name", "42 S 1 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 7001 0 0", Stat{}, false},
		{"cut short", "42 (bash) S 1 42 40 0 -1", Stat{}, false},
		{"empty", "", Stat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse(42, []byte(tt.line))
			if got != tt.want || ok != tt.ok {
				t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("42 (bash) S 1 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 7001 0 0"))
	f.Add([]byte("1 ()) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := Parse(1, b)
		if !ok {
			return
		}
		if len(st.Comm) > len(b) {
			t.Errorf("Parse(%q): name %q longer than the line", b, st.Comm)
		}
	})
}

// TestReadSelf: this process's stat names its parent and started before now.
func TestReadSelf(t *testing.T) {
	st, ok := Read(os.Getpid())
	if !ok {
		t.Fatal("Read(self): not found")
	}
	if st.PPID != os.Getppid() || st.Zombie {
		t.Errorf("Read(self) = %+v, want ppid %d, not a zombie", st, os.Getppid())
	}
	if now := BootTicks(); st.Start == 0 || st.Start > now {
		t.Errorf("Read(self).Start = %d, want in (0, %d] (BootTicks)", st.Start, now)
	}
	if _, ok := Read(-1); ok {
		t.Error("Read(-1) found a process")
	}
}

// TestAll: every process, this one among them, oldest first.
func TestAll(t *testing.T) {
	all := All()
	if !slices.ContainsFunc(all, func(st Stat) bool { return st.PID == os.Getpid() }) {
		t.Errorf("All() has no entry for this process (%d of them)", len(all))
	}
	if !slices.IsSortedFunc(all, func(a, b Stat) int {
		if a.Start != b.Start {
			return int(a.Start) - int(b.Start)
		}
		return a.PID - b.PID
	}) {
		t.Error("All() is not oldest first")
	}
}
