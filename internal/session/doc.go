// Package session holds one client's state: working directory, environment, the files it has
// viewed, its background tasks and its spilled outputs, and runs its commands against that
// state ([Session.Run], [Session.Start]). [Session.Close] frees all of it.
package session
