// Package files reads and edits files as plain operations: view a file or directory,
// replace a unique string, insert lines, create or overwrite a file. Every write is atomic and
// keeps what it does not touch byte for byte: line endings, BOM, encoding, final newline, mode.
//
// Paths given to this package are already resolved and allowed (see [pathscope.Resolver]);
// it never decides access itself, except that a directory walk asks a Hidden function. It
// opens them through an [Opener], which refuses a path that no longer leads where it was
// checked to, and writes inside the directory it opened.
package files
