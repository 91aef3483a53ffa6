package pathscope

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree builds a workspace: root/app (allowed), root/app-evil, root/outside, and links.
func tree(t testing.TB) (root string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"app/src", "app/secrets", "app-evil", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"app/src/main.go", "app/.env", "app/src/.env", "app/key.pem", "outside/passwd", "app-evil/x"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"app/to-outside":     "../outside",
		"app/abs-outside":    filepath.Join(root, "outside/passwd"),
		"app/dangling":       "../outside/new-file",
		"app/dangling-in":    "src/new-file",
		"app/loop":           "loop",
		"app/env-link":       ".env",
		"app/src/up":         "..",
		"app/to-evil":        "../app-evil",
		"app/chain":          "to-outside",
		"app/dangling-chain": "dangling",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolveConfined(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, []string{app}, []string{"**/.env", "*.pem", "secrets/**"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, path string
		want            string // "" means refused with ErrDenied
	}{
		{"relative file", app, "src/main.go", filepath.Join(app, "src/main.go")},
		{"absolute file", "/", filepath.Join(app, "src/main.go"), filepath.Join(app, "src/main.go")},
		{"root itself", app, ".", app},
		{"new file", app, "src/new.go", filepath.Join(app, "src/new.go")},
		{"new nested dirs", app, "a/b/c.go", filepath.Join(app, "a/b/c.go")},
		{"dotdot escape", app, "../outside/passwd", ""},
		{"dotdot inside", filepath.Join(app, "src"), "../src/main.go", filepath.Join(app, "src/main.go")},
		{"prefix look-alike", app, filepath.Join(root, "app-evil/x"), ""},
		{"symlink dir to outside", app, "to-outside/passwd", ""},
		{"absolute symlink to outside", app, "abs-outside", ""},
		{"dangling symlink to outside", app, "dangling", ""},
		{"dangling chain to outside", app, "dangling-chain", ""},
		{"dangling symlink inside", app, "dangling-in", filepath.Join(app, "src/new-file")},
		{"symlink to look-alike", app, "to-evil/x", ""},
		{"chained symlinks", app, "chain/passwd", ""},
		{"symlinked parent up", app, "src/up/src/main.go", filepath.Join(app, "src/main.go")},
		{"deny dotenv", app, ".env", ""},
		{"deny nested dotenv", app, "src/.env", ""},
		{"deny via symlink name target", app, "env-link", ""},
		{"deny pem", app, "key.pem", ""},
		{"deny dir contents", app, "secrets/token", ""},
		{"outside absolute", app, "/etc/passwd", ""},
		{"root dir", app, "/", ""},
		{"file as dir", app, "src/main.go/x", filepath.Join(app, "src/main.go/x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Resolve(tt.cwd, tt.path)
			if tt.want == "" {
				if !errors.Is(err, ErrDenied) {
					t.Fatalf("Resolve(%q, %q) = %q, %v; want ErrDenied", tt.cwd, tt.path, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%q, %q) = %q, %v; want %q", tt.cwd, tt.path, got, err, tt.want)
			}
		})
	}
}

func TestResolveLoop(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Resolve(app, "loop")
	if err == nil || errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "symbolic links") {
		t.Fatalf("Resolve(loop) err = %v, want a symlink-loop error", err)
	}
}

func TestUnconfinedFollowsLinks(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, nil, []string{filepath.Join(root, "outside")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Resolve(app, "/etc/hostname"); err != nil || got != "/etc/hostname" {
		t.Errorf("Resolve(/etc/hostname) = %q, %v; want it allowed", got, err)
	}
	for _, p := range []string{"to-outside/passwd", "../outside/passwd", "abs-outside"} {
		if _, err := r.Resolve(app, p); !errors.Is(err, ErrDenied) {
			t.Errorf("Resolve(%q) err = %v, want denied by the plain deny dir", p, err)
		}
	}
}

func TestRelativeDenyDirAgainstWorkdir(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, nil, []string{"src"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("/", filepath.Join(app, "src/main.go")); !errors.Is(err, ErrDenied) {
		t.Errorf("Resolve(src/main.go) err = %v, want denied", err)
	}
	if _, err := r.Resolve(app, "srcx"); err != nil {
		t.Errorf("Resolve(srcx) err = %v, want allowed (prefix look-alike of a deny dir)", err)
	}
}

func TestHidden(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, []string{app}, []string{"**/*.{pem,key}", ".env"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(app, "key.pem"):     true,
		filepath.Join(app, "a/b/c.key"):   true,
		filepath.Join(app, ".env"):        true,
		filepath.Join(app, "src/.env"):    true, // a slash-free entry is a name, at any depth
		filepath.Join(app, "src/main.go"): false,
		filepath.Join(root, "outside/x"):  true,
		filepath.Join(app, "src/.envrc"):  false,
		filepath.Join(app, "pem/notakey"): false,
	} {
		if got := r.Hidden(p); got != want {
			t.Errorf("Hidden(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := New(dir, []string{filepath.Join(dir, "missing")}, nil); err == nil {
		t.Error("New with a missing allow dir: want an error")
	}
	if _, err := New(dir, nil, []string{"[unclosed"}); err == nil {
		t.Error("New with an invalid pattern: want an error")
	}
}

// FuzzResolve checks the core promise: with allowed roots, whatever the input, a path
// returned lies under a root and, followed for real, stays there.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"src/main.go", "..", "../outside", "to-outside/passwd", "dangling", "/etc/passwd",
		"src/up/../../outside", "a/../../..", "chain", "dangling-chain/x", "//app//src", "./././.."} {
		f.Add(s)
	}
	root := tree(f)
	app := filepath.Join(root, "app")
	r, err := New(app, []string{app}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := r.Resolve(app, p)
		if err != nil {
			return
		}
		if got != app && !strings.HasPrefix(got, app+"/") {
			t.Fatalf("Resolve(%q) = %q, outside %q", p, got, app)
		}
		if real, err := filepath.EvalSymlinks(got); err == nil && real != app && !strings.HasPrefix(real, app+"/") {
			t.Fatalf("Resolve(%q) = %q, which really is %q, outside %q", p, got, real, app)
		}
	})
}

func TestBarePatternIgnoresAncestorsOfWorkdir(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wd := filepath.Join(base, ".hidden-parent", "proj")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(wd, nil, []string{".*"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(wd, "main.go"); err != nil {
		t.Errorf("Resolve(main.go) = %v, want allowed: the dot directory is above the workdir", err)
	}
	if _, err := r.Resolve(wd, ".git/config"); !errors.Is(err, ErrDenied) {
		t.Errorf("Resolve(.git/config) = %v, want denied", err)
	}
}

func TestDenyRulesFollowTheirWords(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	if err := os.MkdirAll(filepath.Join(app, "real/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(app, "LINK")); err != nil {
		t.Fatal(err)
	}
	r, err := New(app, []string{app}, []string{"LINK/**/*.key", ".env", "secrets"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"real/deep/a.key", // the real path a pattern written through a link covers
		"LINK/deep/a.key",
		"src/.env", // a slash-free name matches at any depth
		".env",
		"src/secrets/x", // and hides what is inside a directory of that name
	} {
		if _, err := r.Resolve(app, p); !errors.Is(err, ErrDenied) {
			t.Errorf("Resolve(%s) error = %v, want a refusal", p, err)
		}
		if !r.Hidden(filepath.Join(app, p)) && !strings.HasPrefix(p, "LINK") {
			t.Errorf("Hidden(%s) = false, want true", p)
		}
	}
	if _, err := r.Resolve(app, "real/deep/a.txt"); err != nil {
		t.Errorf("Resolve(real/deep/a.txt) = %v, want allowed", err)
	}
}

func TestRefusalDoesNotRevealLinkTarget(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, []string{app}, []string{"src/.env"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/cwd", filepath.Join(app, "proc-cwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/.env", filepath.Join(app, "to-denied")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"abs-outside", "to-outside/passwd", "chain/passwd", "dangling", "proc-cwd", "to-denied"} {
		_, err := r.Resolve(app, p)
		if !errors.Is(err, ErrDenied) {
			t.Fatalf("Resolve(%s) error = %v, want a refusal", p, err)
		}
		for _, leak := range []string{"/outside", "passwd", "new-file", "/proc", "src/.env"} {
			if strings.Contains(err.Error(), leak) && !strings.Contains(p, leak) {
				t.Errorf("Resolve(%s) error %q reveals %q", p, err, leak)
			}
		}
	}
}

func TestOpenRefusesWhatChangedUnderneath(t *testing.T) {
	t.Parallel()
	root := tree(t)
	app := filepath.Join(root, "app")
	r, err := New(app, []string{app}, []string{"*.pem"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(app, "src/main.go")
	f, err := r.Open(file, os.O_RDONLY)
	if err != nil {
		t.Fatalf("Open(%s): %v", file, err)
	}
	f.Close()
	// src was checked, then replaced by a link to a directory outside.
	if err := os.Rename(filepath.Join(app, "src"), filepath.Join(app, "src-old")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "outside/main.go"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(app, "src")); err != nil {
		t.Fatal(err)
	}
	if f, err := r.Open(file, os.O_RDONLY); !errors.Is(err, ErrDenied) {
		t.Errorf("Open through a swapped-in link to outside: error = %v, want a refusal", err)
		if f != nil {
			f.Close()
		}
	}
	// A link swapped in to a denied file inside is refused too.
	if err := os.Symlink("key.pem", filepath.Join(app, "innocent")); err != nil {
		t.Fatal(err)
	}
	if f, err := r.Open(filepath.Join(app, "innocent"), os.O_RDONLY); !errors.Is(err, ErrChanged) {
		t.Errorf("Open through a link to a denied file: error = %v, want ErrChanged", err)
		if f != nil {
			f.Close()
		}
	}
	if _, err := r.Open(filepath.Join(root, "outside/passwd"), os.O_RDONLY); !errors.Is(err, ErrDenied) {
		t.Errorf("Open outside: error = %v, want a refusal", err)
	}
}
