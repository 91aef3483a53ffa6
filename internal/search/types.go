package search

import (
	"slices"
	"strings"
)

// types lists the file type names grep's type parameter takes, sorted, with the globs each
// means. A sorted list rather than a map: it is built by the linker, not at every start.
var types = []typeEntry{
	{"c", []string{"*.c", "*.h"}},
	{"cpp", []string{"*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"}},
	{"cs", []string{"*.cs", "*.csx"}},
	{"csharp", []string{"*.cs", "*.csx"}},
	{"css", []string{"*.css", "*.scss", "*.sass", "*.less"}},
	{"dart", []string{"*.dart"}},
	{"docker", []string{"Dockerfile", "Dockerfile.*", "*.dockerfile"}},
	{"elixir", []string{"*.ex", "*.exs"}},
	{"go", []string{"*.go"}},
	{"gradle", []string{"*.gradle", "*.gradle.kts"}},
	{"haskell", []string{"*.hs", "*.lhs"}},
	{"html", []string{"*.html", "*.htm", "*.xhtml"}},
	{"java", []string{"*.java"}},
	{"javascript", []string{"*.js", "*.mjs", "*.cjs", "*.jsx"}},
	{"js", []string{"*.js", "*.mjs", "*.cjs", "*.jsx"}},
	{"json", []string{"*.json", "*.jsonc", "*.jsonl"}},
	{"kotlin", []string{"*.kt", "*.kts"}},
	{"lua", []string{"*.lua"}},
	{"make", []string{"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"}},
	{"markdown", []string{"*.md", "*.markdown", "*.mdx"}},
	{"md", []string{"*.md", "*.markdown", "*.mdx"}},
	{"ocaml", []string{"*.ml", "*.mli"}},
	{"perl", []string{"*.pl", "*.pm"}},
	{"php", []string{"*.php"}},
	{"proto", []string{"*.proto"}},
	{"py", []string{"*.py", "*.pyi", "*.pyw"}},
	{"python", []string{"*.py", "*.pyi", "*.pyw"}},
	{"r", []string{"*.r", "*.R", "*.Rmd"}},
	{"rb", []string{"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"}},
	{"ruby", []string{"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"}},
	{"rust", []string{"*.rs"}},
	{"scala", []string{"*.scala", "*.sc"}},
	{"sh", []string{"*.sh", "*.bash", "*.zsh", "*.ksh"}},
	{"sql", []string{"*.sql"}},
	{"svelte", []string{"*.svelte"}},
	{"swift", []string{"*.swift"}},
	{"terraform", []string{"*.tf", "*.tfvars"}},
	{"toml", []string{"*.toml"}},
	{"ts", []string{"*.ts", "*.tsx", "*.mts", "*.cts"}},
	{"txt", []string{"*.txt"}},
	{"typescript", []string{"*.ts", "*.tsx", "*.mts", "*.cts"}},
	{"vue", []string{"*.vue"}},
	{"xml", []string{"*.xml", "*.xsd", "*.xsl"}},
	{"yaml", []string{"*.yaml", "*.yml"}},
	{"zig", []string{"*.zig"}},
}

type typeEntry struct {
	name  string
	globs []string
}

// typeGlobs returns the globs for a type name (case-insensitive).
func typeGlobs(name string) ([]string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	i, ok := slices.BinarySearchFunc(types, name, func(t typeEntry, name string) int { return strings.Compare(t.name, name) })
	if !ok {
		return nil, false
	}
	return types[i].globs, true
}

// TypeNames returns the known type names, sorted.
func TypeNames() []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.name
	}
	return names
}

// TypeTable describes the short type names and their globs, one "name: globs" per entry,
// for tool descriptions.
func TypeTable() string {
	short := []string{"go", "py", "js", "ts", "rust", "java", "c", "cpp", "cs", "rb", "php", "kotlin", "swift", "scala", "sh", "md", "json", "yaml", "toml", "html", "css", "sql", "proto", "make", "docker"}
	var b strings.Builder
	for i, n := range short {
		if i > 0 {
			b.WriteString("; ")
		}
		globs, _ := typeGlobs(n)
		b.WriteString(n + " " + strings.Join(globs, ","))
	}
	return b.String()
}
