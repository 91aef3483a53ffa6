// Package checkpoint keeps what each tool call changed in a workspace, so that any earlier
// state can be put back: a content-addressed store of file contents outside the workspace,
// a journal of checkpoints written so that a kill at any moment leaves it whole, a
// baseline of the workspace's files that says what a call changed (kernel file events name
// the paths; size, times and inode confirm), and rewind.
//
// A checkpoint's id names the state just before its call ran. It records, for every path
// the call changed, the state before and after: a file (its mode and the digest of its
// content), a directory, a symbolic link (its target), or nothing. Contents live in the
// store once each, whichever file or checkpoint holds them.
//
// A [Tracker] keeps one workspace root: [Tracker.Capture] at the end of each call (and at
// its start, for what changed between calls), [Tracker.Rewind], [Tracker.Diff] and
// [Tracker.List]. docs/checkpoints.md says what is kept and what is not.
//
// The package knows nothing of MCP; the tools give it the call's name and summary.
package checkpoint
