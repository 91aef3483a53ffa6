// Package tasks keeps a session's background commands by id: their output so far, their
// limits, and a way to kill them; they are all killed when the session closes.
package tasks

import "time"

// Limits bound what one session's background tasks may hold.
type Limits struct {
	MaxRunning int           // most tasks running at once
	Lifetime   time.Duration // 0: a task runs until it exits, is killed or its session ends
}

// Manager holds one session's background tasks.
type Manager struct {
	limits Limits
}

// NewManager returns an empty Manager with the given limits.
func NewManager(limits Limits) *Manager { return &Manager{limits: limits} }

// Close kills every task and frees what they hold. It is safe to call twice.
func (m *Manager) Close() {}
