package mcptask

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Owner is who a task belongs to: the session or workspace whose tool call it came from.
// Only requests of the same owner see the task; it is forgotten when the owner's context
// ends.
type Owner interface {
	Context() context.Context
}

// OwnerFunc returns the owner of a protocol session's requests.
type OwnerFunc func(*mcp.ServerSession) (Owner, error)

// Defaults of [Limits] fields left zero.
const (
	DefaultTTL      = 30 * time.Minute
	DefaultMaxTasks = 64
	// maxGone bounds the expired task ids remembered to say so.
	maxGone = 1024
)

// Poll intervals suggested to clients: short at first, when most commands end, longer
// once a task has run a minute.
const (
	pollFirst = time.Second
	pollLater = 5 * time.Second
	pollSlow  = time.Minute
)

// Limits bound a [Registry].
type Limits struct {
	// TTL is how long a task's result is kept once it has ended.
	TTL time.Duration
	// MaxTasks bounds one owner's tasks, running or kept.
	MaxTasks int
}

// ErrFull: an owner has MaxTasks tasks running.
var ErrFull = errors.New("too many tasks")

// Registry holds the tasks of every owner.
type Registry struct {
	limits Limits

	mu    sync.Mutex
	tasks map[string]*entry
	gone  map[string]Owner // expired tasks' ids, to tell expired from unknown
	order []string         // gone's ids, oldest first
}

type entry struct {
	id      string
	owner   Owner
	work    Work
	created time.Time
	once    sync.Once // records how the work ended

	// Guarded by Registry.mu.
	updated   time.Time
	status    string
	message   string
	result    *mcp.CallToolResult
	expires   time.Time // once ended
	cancelled bool      // tasks/cancel was asked while it worked
}

// NewRegistry returns an empty Registry.
func NewRegistry(limits Limits) *Registry {
	if limits.TTL <= 0 {
		limits.TTL = DefaultTTL
	}
	if limits.MaxTasks <= 0 {
		limits.MaxTasks = DefaultMaxTasks
	}
	return &Registry{limits: limits, tasks: make(map[string]*entry), gone: make(map[string]Owner)}
}

// Add registers w, owned by owner, as a new task, and returns the result that tells the
// client so. local is the work's id in the tools' own words; the task's id starts with it,
// followed by a dot and a random part no one can guess.
func (r *Registry) Add(owner Owner, local string, w Work) (*CreateTaskResult, error) {
	now := time.Now()
	e := &entry{id: local + "." + rand.Text(), owner: owner, work: w, created: now, updated: now, status: Working}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.roomLocked(owner); err != nil {
		return nil, err
	}
	r.tasks[e.id] = e
	go r.watch(e)
	return &CreateTaskResult{ResultType: "task", Task: r.stateLocked(e, now)}, nil
}

// roomLocked makes room for one more task of owner, dropping its oldest ended one if it
// has as many as it may. r.mu must be held.
func (r *Registry) roomLocked(owner Owner) error {
	n := 0
	var oldest *entry
	for _, e := range r.tasks {
		if e.owner != owner {
			continue
		}
		n++
		if e.status != Working && (oldest == nil || e.updated.Before(oldest.updated)) {
			oldest = e
		}
	}
	if n < r.limits.MaxTasks {
		return nil
	}
	if oldest == nil {
		return fmt.Errorf("%w: %d running", ErrFull, n)
	}
	r.expireLocked(oldest)
	return nil
}

// watch records e's result when its work ends, and forgets e a TTL later, or as soon as
// its owner ends.
func (r *Registry) watch(e *entry) {
	ownerDone := e.owner.Context().Done()
	select {
	case <-e.work.Done():
	case <-ownerDone:
		r.drop(e)
		return
	}
	r.finish(e)
	timer := time.NewTimer(r.limits.TTL)
	defer timer.Stop()
	select {
	case <-timer.C:
		r.mu.Lock()
		if r.tasks[e.id] == e {
			r.expireLocked(e)
		}
		r.mu.Unlock()
	case <-ownerDone:
		r.drop(e)
	}
}

// finish records e's result, once its work has ended: when watch sees it end, or when a
// tasks/get comes first.
func (r *Registry) finish(e *entry) {
	e.once.Do(func() {
		res, msg := e.work.Result(), e.work.Status()
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		e.updated, e.message, e.expires = now, msg, now.Add(r.limits.TTL)
		if e.cancelled {
			e.status = Cancelled
		} else {
			e.status, e.result = Completed, res
		}
	})
}

// expireLocked forgets e, remembering that its id expired. r.mu must be held.
func (r *Registry) expireLocked(e *entry) {
	delete(r.tasks, e.id)
	r.gone[e.id] = e.owner
	r.order = append(r.order, e.id)
	if len(r.order) > maxGone {
		delete(r.gone, r.order[0])
		r.order = r.order[1:]
	}
}

// drop forgets e and every expired id of its owner, whose context has ended.
func (r *Registry) drop(e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tasks, e.id)
	for id, o := range r.gone {
		if o == e.owner {
			delete(r.gone, id)
		}
	}
}

// stateLocked is e's state as results carry it. r.mu must be held.
func (r *Registry) stateLocked(e *entry, now time.Time) Task {
	t := Task{TaskID: e.id, Status: e.status, StatusMessage: e.message,
		CreatedAt: stamp(e.created), LastUpdatedAt: stamp(e.updated)}
	if e.status == Working {
		// A running task lives as long as it runs, and its result a TTL after.
		t.TTLMs = (now.Sub(e.created) + r.limits.TTL).Milliseconds()
		t.PollIntervalMs = poll(now.Sub(e.created)).Milliseconds()
	} else {
		t.TTLMs = e.expires.Sub(e.created).Milliseconds()
	}
	return t
}

func poll(age time.Duration) time.Duration {
	if age < pollSlow {
		return pollFirst
	}
	return pollLater
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// lookupLocked returns owner's task id, or the protocol error for an id that is unknown,
// expired or another owner's (which reads as unknown). r.mu must be held.
func (r *Registry) lookupLocked(owner Owner, id, verb string) (*entry, error) {
	if e := r.tasks[id]; e != nil && e.owner == owner {
		return e, nil
	}
	why := "Task not found"
	if o, ok := r.gone[id]; ok && o == owner {
		why = "Task has expired"
	} else if p, ok := owner.(interface{ PastTask(string) error }); ok {
		if err := p.PastTask(id); err != nil {
			why = err.Error()
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Failed to %s task: %s", verb, why)}
}

// Get is tasks/get: the task's state, with its result once completed.
func (r *Registry) Get(owner Owner, id string) (*GetTaskResult, error) {
	r.mu.Lock()
	e, err := r.lookupLocked(owner, id, "retrieve")
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-e.work.Done():
		r.finish(e) // it has ended: say so, even before watch has seen it
	default:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if e.status != Working && now.After(e.expires) && r.tasks[e.id] == e {
		r.expireLocked(e) // its timer has not fired yet
	}
	if e, err = r.lookupLocked(owner, id, "retrieve"); err != nil {
		return nil, err
	}
	if e.status == Working {
		e.message = e.work.Status()
	}
	return &GetTaskResult{ResultType: "complete", Task: r.stateLocked(e, now), Result: e.result}, nil
}

// Cancel is tasks/cancel: the task's work is asked to stop, once however often it is
// asked; a task that has ended stays as it ended.
func (r *Registry) Cancel(owner Owner, id string) (*AckResult, error) {
	r.mu.Lock()
	e, err := r.lookupLocked(owner, id, "cancel")
	cancel := err == nil && e.status == Working && !e.cancelled
	if cancel {
		e.cancelled = true
	}
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if cancel {
		e.work.Cancel()
	}
	return &AckResult{ResultType: "complete"}, nil
}

// Update is tasks/update. Boris's tasks never ask the client for input, so there is
// nothing to take; a known task's update is acknowledged, and ignored as the extension
// asks of answers to requests that are not outstanding.
func (r *Registry) Update(owner Owner, id string) (*AckResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.lookupLocked(owner, id, "update"); err != nil {
		return nil, err
	}
	return &AckResult{ResultType: "complete"}, nil
}
