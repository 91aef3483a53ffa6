package server

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/session"
)

// workspaceTable is a workspaces table for unit tests, which records the workspaces closed.
type workspaceTable struct {
	*workspaces
	mu     sync.Mutex
	closed []string // state ids, in the order they were closed
}

func newWorkspaceTable(t *testing.T, max int, idle time.Duration) *workspaceTable {
	wt := &workspaceTable{}
	dir := t.TempDir()
	wt.workspaces = newWorkspaces(workspaceOptions{
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		max:      max,
		idle:     idle,
		newState: func(id string) *session.Session { return session.New(session.Options{ID: id, Workdir: dir}) },
		opened:   func(*session.Session, *mcp.Implementation) {},
		ended: func(st *session.Session) {
			wt.mu.Lock()
			wt.closed = append(wt.closed, st.ID)
			wt.mu.Unlock()
		},
	})
	t.Cleanup(func() { wt.close(); wt.wait() })
	return wt
}

// use binds a fresh protocol session to the workspace key of owner and returns its state
// and the release.
func (wt *workspaceTable) use(t *testing.T, key, owner string) (*session.Session, func()) {
	t.Helper()
	ss := new(mcp.ServerSession)
	release, err := wt.bind(ss, key, owner, nil)
	if err != nil {
		t.Fatalf("bind(%q, %q): %v", key, owner, err)
	}
	st, ok := wt.stateOf(ss)
	if !ok {
		t.Fatalf("stateOf a bound session: not bound")
	}
	return st, release
}

func (wt *workspaceTable) closedIDs() []string {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return append([]string(nil), wt.closed...)
}

// TestWorkspacesOwnerQuota: an owner past its quota replaces its own least recently used
// idle workspace, never another owner's.
func TestWorkspacesOwnerQuota(t *testing.T) {
	wt := newWorkspaceTable(t, 8, 0) // quota 2
	other, release := wt.use(t, "b/1", "b")
	release()
	var mine []*session.Session
	for _, key := range []string{"a/1", "a/2", "a/3"} {
		st, release := wt.use(t, key, "a")
		release()
		mine = append(mine, st)
	}
	if got := wt.closedIDs(); len(got) != 1 || got[0] != mine[0].ID {
		t.Errorf("closed %q, want only a's first workspace %q (b's is %q)", got, mine[0].ID, other.ID)
	}
	if n := wt.len(); n != 3 {
		t.Errorf("len() = %d, want 3", n)
	}
}

// TestWorkspacesBusyKept: a workspace with a call running is never closed to make room;
// the owner is refused until it is free.
func TestWorkspacesBusyKept(t *testing.T) {
	wt := newWorkspaceTable(t, 4, 0) // quota 1
	_, release := wt.use(t, "a/1", "a")
	_, err := wt.bind(new(mcp.ServerSession), "a/2", "a", nil)
	if err == nil || !strings.Contains(err.Error(), "holds 1 stateless workspaces") {
		t.Fatalf("bind past the quota with the owner's workspace busy: err = %v, want the quota refusal", err)
	}
	release()
	_, release = wt.use(t, "a/2", "a")
	release()
	if got := wt.closedIDs(); len(got) != 1 {
		t.Errorf("closed %q, want the first workspace once it was idle", got)
	}
}

// TestWorkspacesFullTable: a full table closes the least recently used idle workspace of
// any owner, and refuses when every workspace is busy.
func TestWorkspacesFullTable(t *testing.T) {
	wt := newWorkspaceTable(t, 2, 0) // quota 1
	first, release := wt.use(t, "a/1", "a")
	release()
	_, busy := wt.use(t, "b/1", "b")
	_, release = wt.use(t, "c/1", "c")
	release()
	if got := wt.closedIDs(); len(got) != 1 || got[0] != first.ID {
		t.Errorf("closed %q, want the least recently used %q", got, first.ID)
	}
	_, release = wt.use(t, "c/1", "c") // c's workspace is busy now, as is b's
	_, err := wt.bind(new(mcp.ServerSession), "d/1", "d", nil)
	if err == nil || !strings.Contains(err.Error(), "too many stateless workspaces (2)") {
		t.Errorf("bind with every workspace busy: err = %v, want the full-table refusal", err)
	}
	release()
	busy()
}

// TestWorkspacesIdleReaped: a workspace idle for the idle timeout is closed; one in use
// is not, and its timer starts again when it is released.
func TestWorkspacesIdleReaped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wt := newWorkspaceTable(t, 4, time.Minute)
		_, release := wt.use(t, "a/1", "a")
		release()
		time.Sleep(time.Minute / 2)
		_, release = wt.use(t, "a/1", "a")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := wt.len(); n != 1 {
			t.Fatalf("len() = %d while the workspace is in use, want 1", n)
		}
		release()
		time.Sleep(time.Minute - time.Nanosecond)
		synctest.Wait()
		if n := wt.len(); n != 1 {
			t.Fatalf("len() = %d before the idle timeout, want 1", n)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := wt.len(); n != 0 {
			t.Errorf("len() = %d after the idle timeout, want 0", n)
		}
		wt.close()
		wt.wait()
	})
}
