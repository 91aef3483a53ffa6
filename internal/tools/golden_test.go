package tools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/tools"
)

var update = flag.Bool("update", false, "rewrite golden files (and the reference of docs/tools.md) from the current code")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/tools -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run go test ./internal/tools -update and review:\n%s", path, diff)
	}
}

// A tool set as a client sees it, by the settings that shape tools/list.
type toolSet struct {
	file       string // its golden snapshot
	compat     bool
	tools      string // --tools
	structured bool
}

var (
	borisTools      = toolSet{"tools_list.golden.json", false, "boris", false}
	structuredTools = toolSet{"tools_list_structured.golden.json", false, "boris", true}
	compatTools     = toolSet{"tools_list_compat.golden.json", true, "boris", false}
	claudeTools     = toolSet{"tools_list_claude_code.golden.json", false, "claude-code", false}
	codexTools      = toolSet{"tools_list_codex.golden.json", false, "codex", false}
)

func listTools(t *testing.T, set toolSet) []*mcp.Tool {
	t.Helper()
	cfg := testConfig(t)
	cfg.AnthropicCompat, cfg.Tools, cfg.StructuredOutput = set.compat, set.tools, set.structured
	cfg.Checkpoints, cfg.StateDir = true, t.TempDir() // on by default, as Parse sets them
	cs, _ := connect(t, cfg, nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// TestToolsListGolden snapshots names, descriptions, schemas and annotations: they are API.
func TestToolsListGolden(t *testing.T) {
	t.Parallel()
	for _, set := range []toolSet{borisTools, structuredTools, compatTools, claudeTools, codexTools} {
		t.Run(set.file, func(t *testing.T) {
			t.Parallel()
			b, err := json.MarshalIndent(listTools(t, set), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, set.file, append(b, '\n'))
		})
	}
}

// TestReadmeToolsSection keeps the reference section of docs/tools.md in step with the
// tool table.
func TestReadmeToolsSection(t *testing.T) {
	t.Parallel()
	const begin, end = "<!-- tools:begin", "<!-- tools:end -->"
	readme := filepath.Join("..", "..", "docs", "tools.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(begin))
	j := bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/tools.md lacks the %q … %q markers", begin, end)
	}
	i += bytes.IndexByte(data[i:], '\n') + 1
	got := toolsMarkdown(listTools(t, borisTools), listTools(t, compatTools), listTools(t, claudeTools), listTools(t, codexTools))
	if *update {
		out := append(append(append([]byte(nil), data[:i]...), got...), data[j:]...)
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(got, string(data[i:j])); diff != "" {
		t.Errorf("the tools reference of docs/tools.md is stale (-want +got); run go test ./internal/tools -update:\n%s", diff)
	}
}

// toolsMarkdown renders the tools, their descriptions and parameters.
func toolsMarkdown(split, compat, claude, codex []*mcp.Tool) string {
	var b strings.Builder
	seen := map[string]bool{}
	write := func(tools []*mcp.Tool, note string) {
		for _, tool := range tools {
			if seen[tool.Name] {
				continue
			}
			seen[tool.Name] = true
			fmt.Fprintf(&b, "### `%s`%s\n\n%s\n\n", tool.Name, note, strings.TrimSpace(tool.Description))
			var schema struct {
				Properties map[string]struct {
					Type        any    `json:"type"`
					Description string `json:"description"`
					Enum        []any  `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			}
			raw, _ := json.Marshal(tool.InputSchema)
			_ = json.Unmarshal(raw, &schema)
			if len(schema.Properties) == 0 {
				continue
			}
			names := make([]string, 0, len(schema.Properties))
			for n := range schema.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			b.WriteString("| Parameter | Type | Required | Description |\n|---|---|---|---|\n")
			for _, n := range names {
				p := schema.Properties[n]
				typ := fmt.Sprint(p.Type)
				if len(p.Enum) > 0 {
					var vals []string
					for _, v := range p.Enum {
						vals = append(vals, fmt.Sprintf("`%v`", v))
					}
					typ = strings.Join(vals, " \\| ")
				}
				req := ""
				for _, r := range schema.Required {
					if r == n {
						req = "yes"
					}
				}
				desc := strings.ReplaceAll(strings.ReplaceAll(p.Description, "\n", " "), "|", "\\|")
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", n, typ, req, desc)
			}
			b.WriteString("\n")
		}
	}
	write(split, "")
	write(compat, " (with `--anthropic-compat`, instead of `view`, `str_replace` and `create_file`)")
	writeFace(&b, claude, "### Claude Code's tools (with `--tools claude-code`, instead of all of the above)\n\n"+
		"The same implementation under the names and parameters of Claude Code's own tools, which Claude models know. Required parameters are in bold.\n\n", tools.ClaudeTwins)
	writeFace(&b, codex, "### Codex's tools (with `--tools codex`, instead of all of the above)\n\n"+
		"The same core under the names, parameters and descriptions of the tools the Codex CLI "+tools.CodexVersion+" gives GPT models, and with their result wording. Required parameters are in bold.\n\n", tools.CodexTwins)
	return b.String()
}

// writeFace renders another client's face: after intro, one table of its tools, their
// parameters, and the Boris tool each is built on (twins).
func writeFace(b *strings.Builder, face []*mcp.Tool, intro string, twins map[string]string) {
	b.WriteString(intro)
	b.WriteString("| Tool | Parameters | Built on | What it does |\n|---|---|---|---|\n")
	for _, tool := range face {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		_ = json.Unmarshal(raw, &schema)
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			ri, rj := slices.Contains(schema.Required, names[i]), slices.Contains(schema.Required, names[j])
			if ri != rj {
				return ri
			}
			return names[i] < names[j]
		})
		var params []string
		for _, n := range names {
			p := "`" + n + "`"
			if slices.Contains(schema.Required, n) {
				p = "**" + p + "**"
			}
			params = append(params, p)
		}
		first, _, _ := strings.Cut(tool.Description, "\n")
		if i := strings.Index(first, ". "); i >= 0 {
			first = first[:i+1]
		}
		fmt.Fprintf(b, "| `%s` | %s | `%s` | %s |\n", tool.Name, strings.Join(params, ", "), twins[tool.Name], strings.NewReplacer("|", "\\|", "*", "\\*").Replace(first))
	}
	b.WriteString("\n")
}
