package codex

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
	"github.com/mjkoo/boris/internal/testutil"
)

// readmeTables returns the bodies of the README's [mcp_servers.boris] TOML blocks: what
// it tells Codex users to put in their config.toml.
func readmeTables(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, m := range regexp.MustCompile("(?s)```toml\n\\[mcp_servers\\.boris\\]\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		tables = append(tables, m[1])
	}
	if len(tables) != 2 {
		t.Fatalf("the README has %d [mcp_servers.boris] blocks, want 2 (STDIO and HTTP)", len(tables))
	}
	return tables
}

// TestReadmeConfigs: the Codex configurations the README gives work as written, with
// only its placeholders filled in (the binary, the project, and the server's address)
// and the line the README gives for a run that cannot ask before each call, as codex
// exec cannot (runCodex adds it).
func TestReadmeConfigs(t *testing.T) {
	t.Parallel()
	tables := readmeTables(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "`default_tools_approval_mode = \"approve\"`") {
		t.Fatal("the README does not say how to let Codex call Boris's tools without asking (default_tools_approval_mode)")
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		dir := testutil.Files(t, nil)
		table := strings.NewReplacer("/path/to/boris", clitest.Boris(t), "/path/to/project", dir).Replace(tables[0])
		m, url := newFakeModel(t, call("bash", map[string]any{"command": "echo from-the-readme; pwd"}))
		runCodex(t, url, unknownModel, table, nil, 3*time.Minute).wantClean(t)
		wantResult(t, m, 0, "from-the-readme", dir)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		dir := testutil.Files(t, nil)
		server, env := httpServer(t, dir)
		url := regexp.MustCompile(`url = "([^"]+)"`).FindStringSubmatch(server)[1]
		token := strings.TrimPrefix(env[0], tokenEnv+"=")
		table := strings.ReplaceAll(tables[1], "http://127.0.0.1:8080/mcp", url)
		m, modelURL := newFakeModel(t, call("bash", map[string]any{"command": "echo over-the-readme-http"}))
		runCodex(t, modelURL, unknownModel, table, []string{"BORIS_TOKEN=" + token}, 3*time.Minute).wantClean(t)
		wantResult(t, m, 0, "over-the-readme-http")
	})
}
