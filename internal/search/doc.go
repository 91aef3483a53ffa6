// Package search finds things in a tree of files: grep searches file contents with a
// regular expression and find lists paths matching a glob. Both walk in parallel, obey
// .gitignore-style rules and a [Scope], never open anything but regular files, and count
// what they skipped so that an empty result can be told apart from a blind spot.
package search
