package config

import (
	"bytes"
	stdflag "flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = stdflag.Bool("update", false, "rewrite the flag table of docs/configuration.md from the flag definitions")

// TestReadmeFlagTable keeps the table of flags in docs/configuration.md in step with the flags Boris
// takes: it is generated from their definitions (go test ./internal/config -update, or
// go generate ./...).
func TestReadmeFlagTable(t *testing.T) {
	const begin, end = "<!-- flags:begin", "<!-- flags:end -->"
	readme := filepath.Join("..", "..", "docs", "configuration.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(begin))
	j := bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md lacks the %q … %q markers", begin, end)
	}
	i += bytes.IndexByte(data[i:], '\n') + 1
	got := flagTable(flagsOf(reflect.TypeFor[cli]()))
	if *update {
		out := append(append(append([]byte(nil), data[:i]...), got...), data[j:]...)
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(got, string(data[i:j])); diff != "" {
		t.Errorf("the flag table of docs/configuration.md is stale (-want +got); run go test ./internal/config -update:\n%s", diff)
	}
}

// flagTable renders flags as a Markdown table: flag, variable, default, meaning.
func flagTable(flags []flag) string {
	var b strings.Builder
	b.WriteString("| Flag | Environment | Default | Meaning |\n|------|-------------|---------|---------|\n")
	for _, f := range flags {
		if f.hidden || f.positional {
			continue
		}
		name := "--" + f.name
		if f.negatable {
			name = "--[no-]" + f.name
		}
		env := ""
		if f.envvar != "" {
			env = "`" + f.envvar + "`"
		}
		help := strings.ReplaceAll(f.help, "|", `\|`)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, env, tableDefault(f), help)
	}
	return b.String()
}

func tableDefault(f flag) string {
	switch {
	case f.envvar == "":
		return "" // --version and the like: an action, not a setting
	case f.kind == reflect.Bool && f.def == "true":
		return "on"
	case f.kind == reflect.Bool:
		return "off"
	case f.def == "":
		return "none"
	}
	return "`" + f.def + "`"
}
