package search

import (
	"slices"
	"strings"
)

// types maps a file type name, as grep's type parameter takes it, to the globs it means.
var types = map[string][]string{
	"c":          {"*.c", "*.h"},
	"cpp":        {"*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"},
	"cs":         {"*.cs", "*.csx"},
	"css":        {"*.css", "*.scss", "*.sass", "*.less"},
	"docker":     {"Dockerfile", "Dockerfile.*", "*.dockerfile"},
	"go":         {"*.go"},
	"html":       {"*.html", "*.htm", "*.xhtml"},
	"java":       {"*.java"},
	"js":         {"*.js", "*.mjs", "*.cjs", "*.jsx"},
	"json":       {"*.json", "*.jsonc", "*.jsonl"},
	"kotlin":     {"*.kt", "*.kts"},
	"lua":        {"*.lua"},
	"make":       {"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"},
	"md":         {"*.md", "*.markdown", "*.mdx"},
	"php":        {"*.php"},
	"proto":      {"*.proto"},
	"py":         {"*.py", "*.pyi", "*.pyw"},
	"rb":         {"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"},
	"rust":       {"*.rs"},
	"scala":      {"*.scala", "*.sc"},
	"sh":         {"*.sh", "*.bash", "*.zsh", "*.ksh"},
	"sql":        {"*.sql"},
	"swift":      {"*.swift"},
	"toml":       {"*.toml"},
	"ts":         {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"txt":        {"*.txt"},
	"xml":        {"*.xml", "*.xsd", "*.xsl"},
	"yaml":       {"*.yaml", "*.yml"},
	"zig":        {"*.zig"},
	"terraform":  {"*.tf", "*.tfvars"},
	"dart":       {"*.dart"},
	"elixir":     {"*.ex", "*.exs"},
	"haskell":    {"*.hs", "*.lhs"},
	"ocaml":      {"*.ml", "*.mli"},
	"perl":       {"*.pl", "*.pm"},
	"r":          {"*.r", "*.R", "*.Rmd"},
	"vue":        {"*.vue"},
	"svelte":     {"*.svelte"},
	"gradle":     {"*.gradle", "*.gradle.kts"},
	"csharp":     {"*.cs", "*.csx"},
	"python":     {"*.py", "*.pyi", "*.pyw"},
	"javascript": {"*.js", "*.mjs", "*.cjs", "*.jsx"},
	"typescript": {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"markdown":   {"*.md", "*.markdown", "*.mdx"},
	"ruby":       {"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"},
}

// typeGlobs returns the globs for a type name (case-insensitive).
func typeGlobs(name string) ([]string, bool) {
	g, ok := types[strings.ToLower(strings.TrimSpace(name))]
	return g, ok
}

// TypeNames returns the known type names, sorted.
func TypeNames() []string {
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	slices.Sort(names)
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
		b.WriteString(n + " " + strings.Join(types[n], ","))
	}
	return b.String()
}
