// Package pathscope turns a path into an allowed absolute path, or refuses it with the reason.
//
// A [Resolver] follows every symlink itself, including dangling ones and links created after
// startup, so the path it returns is where a read or write would really land; that real path
// must lie under an allowed root, and neither it nor the path as asked may match a deny rule.
package pathscope
