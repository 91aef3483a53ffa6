// Package glob matches slash-separated relative paths against glob patterns: one engine for
// every glob Boris takes, find's and grep's patterns, .gitignore rules and --deny-dir.
// Matching takes polynomial time whatever the pattern.
//
// '*' and '?' match within one path segment, '**' as a whole segment matches any number
// of segments, '[...]' is a character class ('!' or '^' negates), '\' escapes, and in the
// [Extended] syntax '{a,b}' lists alternatives. A pattern without a slash matches the last
// segment, a name at any depth, as .gitignore and ripgrep's --glob do; a pattern with a
// slash anywhere but at its end matches the whole path.
//
// FuzzAgreesWithDoublestar checks the engine against github.com/bmatcuk/doublestar, which
// --deny-dir used before, on the patterns both accept. They differ, on purpose, here:
//
//  1. A pattern without a slash matches a name at any depth; doublestar matches it
//     against the whole path.
//  2. A leading '/' or './' anchors a pattern at the root, and a trailing '/' marks a
//     directory name ("src/" is any directory named src); doublestar takes them as
//     literal text. The same holds for an alternative ("{/a,b}").
//  3. An alternative that ends in a slash names a directory: "a/{b,}" matches a/b and a;
//     doublestar matches a/b and the text "a/".
//  4. Invalid UTF-8 is compared byte for byte; doublestar decodes it, so that any two
//     invalid bytes are equal.
//  5. A run of stars within a segment is one star, including stars that meet when braces
//     are expanded ("*{*}"), and "**/**" is one "**"; doublestar fails some of these.
//  6. A trailing "/**" also matches zero segments ("a/b*/**" matches a/bc); doublestar
//     does so only after a literal directory ("a/**" matches a).
//  7. An empty alternative ("{}", "{a,}") matches the empty string; doublestar drops some.
//  8. Classes and '?' come from path.Match, whose '*' may stop inside a multi-byte
//     character ("*??" matches the one character "듰").
//  9. A reversed range ("[z-a]") matches nothing, as in path.Match.
package glob
