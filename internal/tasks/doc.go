// Package tasks keeps a session's background commands by id: their output so far, their
// limits, and a way to kill them; they are all killed when the session closes.
package tasks
