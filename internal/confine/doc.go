// Package confine confines commands to a set of paths with Landlock, the Linux security
// module that lets an unprivileged process restrict what it and its children may reach.
//
// A [Policy] is decided once at startup: which paths commands may read, write and run, and
// which kernel features (the Landlock ABI) back it. Each session gets a [Domain] of its own,
// with its private temporary directory added. Only the processes a Domain starts are
// confined, never Boris itself, and no thread of Boris is ever in a domain: a Domain is
// served by a launcher, Boris's own program started again, once per session. One thread of
// the launcher restricts itself and then does nothing but fork the session's commands, on
// Boris's behalf and with Boris as their parent (CLONE_PARENT), so that Boris waits for
// them and tracks them as any other. A command costs one round trip over a socket, where a
// helper that restricts itself and then execs the shell would cost a second exec every time.
package confine
