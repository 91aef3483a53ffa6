// Package packaging checks what MCP users install Boris from: the npm package that
// `npx -y @mjkoo/boris` runs, the Claude Desktop bundles and the MCP Registry entry, as
// packaging/pack builds them from a release's binaries, without publishing anything.
package packaging

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const version = "1.2.3"

// pack builds Boris for this machine, lays it out as goreleaser's dist directory for every
// platform (the other platforms get the same binary: only this one's is run), and runs
// packaging/pack on it. It returns the directory pack wrote to.
func pack(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"npm", "npx", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			testutil.Missing(t, "BORIS_REQUIRE_NPM", tool+" is not installed")
		}
	}
	dist := t.TempDir()
	bin := filepath.Join(dist, "boris_"+runtime.GOOS+"_"+runtime.GOARCH+"_v1", "boris")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", bin, "github.com/mjkoo/boris/cmd/boris")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, target := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		if target == runtime.GOOS+"_"+runtime.GOARCH {
			continue
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(dist, "boris_"+target, "boris")
		if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(other, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("./pack", dist, version, out)
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pack: %v\n%s", err, b)
	}
	return out
}

// TestPackages builds the packages once and checks them.
func TestPackages(t *testing.T) {
	out := pack(t)
	t.Run("npx", func(t *testing.T) { testNpx(t, out) })
	t.Run("bundles and registry entry", func(t *testing.T) { testBundlesAndRegistryEntry(t, out) })
}

// testNpx runs the npm package as an MCP client's configuration does, with `npx -y` on
// the packed tarball, over STDIO, lists its tools and calls one.
func testNpx(t *testing.T, out string) {
	tarball := "mjkoo-boris-" + version + ".tgz"
	if _, err := os.Stat(filepath.Join(out, tarball)); err != nil {
		t.Fatalf("pack wrote no npm tarball: %v", err)
	}
	dir := testutil.Files(t, map[string]string{"hello.txt": "hello from the project\n"})
	// npx takes a local package for a path that starts with "./".
	cmd := exec.Command("npx", "-y", "./"+tarball, "--transport", "stdio", "--workdir", dir)
	cmd.Dir = out
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "npx-check", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through npx: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"bash", "view", "str_replace", "create_file", "grep", "find"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list through npx lacks %s: %v", want, names)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "hello.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.Content); res.IsError || !strings.Contains(string(b), "hello from the project") {
		t.Errorf("view through npx, in the --workdir given: %s", b)
	}
}

// testBundlesAndRegistryEntry: each platform's Claude Desktop bundle holds the manifest,
// with the release's version, and an executable binary where the manifest says; the
// registry entry names the npm package as its package.json does, and the image, at the
// release's version.
func testBundlesAndRegistryEntry(t *testing.T, out string) {
	for _, target := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		z, err := zip.OpenReader(filepath.Join(out, "boris_"+version+"_"+target+".mcpb"))
		if err != nil {
			t.Errorf("%s: %v", target, err)
			continue
		}
		var manifest struct {
			Version string `json:"version"`
			Server  struct {
				EntryPoint string `json:"entry_point"`
			} `json:"server"`
			Compatibility struct {
				Platforms []string `json:"platforms"`
			} `json:"compatibility"`
		}
		files := map[string]*zip.File{}
		for _, f := range z.File {
			files[f.Name] = f
		}
		if f := files["manifest.json"]; f == nil {
			t.Errorf("%s: no manifest.json", target)
		} else {
			r, _ := f.Open()
			b, _ := io.ReadAll(r)
			r.Close()
			if err := json.Unmarshal(b, &manifest); err != nil {
				t.Errorf("%s: manifest.json: %v", target, err)
			}
		}
		if manifest.Version != version || !slices.Equal(manifest.Compatibility.Platforms, []string{strings.Split(target, "_")[0]}) {
			t.Errorf("%s: manifest version %q, platforms %v", target, manifest.Version, manifest.Compatibility.Platforms)
		}
		if f := files[manifest.Server.EntryPoint]; f == nil || f.Mode()&0o111 == 0 {
			t.Errorf("%s: no executable %q in the bundle", target, manifest.Server.EntryPoint)
		}
		z.Close()
	}

	var entry struct {
		Name     string `json:"name"`
		Version  string `json:"version"`
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			Version      string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(out, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &entry); err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Name    string `json:"name"`
		MCPName string `json:"mcpName"`
	}
	b, err = os.ReadFile(filepath.Join("npm", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if entry.Version != version || entry.Name != pkg.MCPName {
		t.Errorf("server.json: name %q version %q; package.json mcpName %q", entry.Name, entry.Version, pkg.MCPName)
	}
	var kinds []string
	for _, p := range entry.Packages {
		kinds = append(kinds, p.RegistryType)
		switch p.RegistryType {
		case "npm":
			if p.Identifier != pkg.Name || p.Version != version {
				t.Errorf("server.json names npm %s@%s, want %s@%s", p.Identifier, p.Version, pkg.Name, version)
			}
		case "oci":
			if p.Identifier != "ghcr.io/mjkoo/boris:"+version {
				t.Errorf("server.json names the image %s", p.Identifier)
			}
		}
	}
	if !slices.Equal(kinds, []string{"npm", "oci"}) {
		t.Errorf("server.json packages: %v, want npm and oci", kinds)
	}
}
