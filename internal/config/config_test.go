package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse(nil, env(nil), "v1", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Transport != "http" || cfg.Host != "127.0.0.1" || cfg.Port != 8080 || cfg.Timeout != 120*time.Second ||
		cfg.MaxFileSize != 10_000_000 || !cfg.RequireViewBeforeEdit || cfg.Token != "" || cfg.Version != "v1" ||
		cfg.Stateless || cfg.StreamKeepAlive != DefaultStreamKeepAlive || cfg.MaxSessions != 64 ||
		cfg.OutputBudget != DefaultOutputBudget {
		t.Errorf("Parse(nil) = %+v, want the documented defaults", cfg)
	}
	if cfg.Shell != "/bin/bash" && cfg.Shell != "/bin/sh" {
		t.Errorf("Shell = %q", cfg.Shell)
	}
}

// TestDefault: Default is what an empty command line gives.
func TestDefault(t *testing.T) {
	t.Parallel()
	want, err := Parse(nil, env(nil), "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	got := Default()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default() differs from Parse(nil) (-want +got):\n%s", diff)
	}
	if got.KillGrace != DefaultKillGrace || got.MaxSpillTotal != DefaultMaxSpillTotal || got.SessionIdleTimeout != 30*time.Minute {
		t.Errorf("Default() = %+v, want the documented defaults", got)
	}
}

func TestParseFlagsAndEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(Config) string
	}{
		{"deny pattern with braces survives", []string{"--deny-dir", "**/*.{pem,key}", "--deny-dir", "secrets/**"}, nil,
			func(c Config) string { return cmp.Diff([]string{"**/*.{pem,key}", "secrets/**"}, c.DenyDirs) }},
		{"deny env list splits outside braces", nil, map[string]string{"BORIS_DENY_DIRS": "**/*.{pem,key},.env"},
			func(c Config) string { return cmp.Diff([]string{"**/*.{pem,key}", ".env"}, c.DenyDirs) }},
		{"flag beats env", []string{"--port", "9000"}, map[string]string{"BORIS_PORT": "9100"},
			func(c Config) string { return cmp.Diff(9000, c.Port) }},
		{"env port", nil, map[string]string{"BORIS_PORT": "9100"},
			func(c Config) string { return cmp.Diff(9100, c.Port) }},
		{"origins repeated or comma-separated", []string{"--allow-origin", "https://a.example,https://b.example", "--allow-origin", "http://c.example"}, nil,
			func(c Config) string {
				return cmp.Diff([]string{"https://a.example", "https://b.example", "http://c.example"}, c.AllowOrigins)
			}},
		{"timeout in seconds", []string{"--timeout", "90"}, nil,
			func(c Config) string { return cmp.Diff(90*time.Second, c.Timeout) }},
		{"timeout as a duration", []string{"--timeout=2m"}, nil,
			func(c Config) string { return cmp.Diff(2*time.Minute, c.Timeout) }},
		{"idle timeout as a duration from env", nil, map[string]string{"BORIS_SESSION_IDLE_TIMEOUT": "1h30m"},
			func(c Config) string { return cmp.Diff(90*time.Minute, c.SessionIdleTimeout) }},
		{"background limit in seconds from env", nil, map[string]string{"BORIS_BACKGROUND_TASK_TIMEOUT": "600"},
			func(c Config) string { return cmp.Diff(10*time.Minute, c.BackgroundTaskLimit) }},
		{"disable tools comma list", []string{"--disable-tools", "grep,find"}, nil,
			func(c Config) string { return cmp.Diff([]string{"grep", "find"}, c.DisableTools) }},
		{"workdir absolute", []string{"--workdir", dir}, nil,
			func(c Config) string { return cmp.Diff(dir, c.Workdir) }},
		{"token from env", nil, map[string]string{"BORIS_TOKEN": "s3cret"},
			func(c Config) string { return cmp.Diff("s3cret", c.Token) }},
		{"generate token", []string{"--generate-token"}, nil,
			func(c Config) string {
				if len(c.Token) != 64 || !c.TokenGenerated {
					return "want a 64-hex-digit generated token"
				}
				return ""
			}},
		{"non-loopback with token", []string{"--host", "0.0.0.0", "--token", "x"}, nil,
			func(c Config) string { return cmp.Diff("0.0.0.0", c.Host) }},
		{"non-loopback insecure", []string{"--host", "0.0.0.0", "--insecure-no-auth"}, nil,
			func(c Config) string { return cmp.Diff(true, c.InsecureNoAuth) }},
		{"stdio ignores host rule", []string{"--transport", "stdio"}, map[string]string{"BORIS_HOST": "0.0.0.0"},
			func(c Config) string { return cmp.Diff("stdio", c.Transport) }},
		{"no view requirement", []string{"--no-require-view-before-edit"}, nil,
			func(c Config) string { return cmp.Diff(false, c.RequireViewBeforeEdit) }},
		{"log level over HTTP", nil, nil,
			func(c Config) string { return cmp.Diff(slog.LevelInfo, c.LogLevel) }},
		{"log level on STDIO stays quiet", []string{"--transport", "stdio"}, nil,
			func(c Config) string { return cmp.Diff(slog.LevelWarn, c.LogLevel) }},
		{"log level asked for on STDIO", []string{"--transport", "stdio", "--log-level", "info"}, nil,
			func(c Config) string { return cmp.Diff(slog.LevelInfo, c.LogLevel) }},
		{"stateless flag", []string{"--stateless"}, nil,
			func(c Config) string { return cmp.Diff(true, c.Stateless) }},
		{"stateless env", nil, map[string]string{"BORIS_STATELESS": "true"},
			func(c Config) string { return cmp.Diff(true, c.Stateless) }},
		{"confine defaults", nil, nil,
			func(c Config) string {
				return cmp.Diff([]any{"auto", false, 0}, []any{c.ConfineBash, c.ConfineNetwork, c.LandlockABI})
			}},
		{"confine flags", []string{"--confine-bash", "on", "--confine-read", dir, "--confine-write", dir, "--confine-write", "/tmp", "--confine-network"}, nil,
			func(c Config) string {
				return cmp.Diff([]any{"on", []string{dir}, []string{dir, "/tmp"}, true}, []any{c.ConfineBash, c.ConfineRead, c.ConfineWrite, c.ConfineNetwork})
			}},
		{"confine env lists", nil, map[string]string{"BORIS_CONFINE_BASH": "off", "BORIS_CONFINE_READ": dir + ",/etc/hostname", "BORIS_CONFINE_WRITE": dir, "BORIS_CONFINE_NETWORK": "1", "BORIS_LANDLOCK_ABI": "3"},
			func(c Config) string {
				return cmp.Diff([]any{"off", []string{dir, "/etc/hostname"}, []string{dir}, true, 3}, []any{c.ConfineBash, c.ConfineRead, c.ConfineWrite, c.ConfineNetwork, c.LandlockABI})
			}},
		{"bool env", nil, map[string]string{"BORIS_NO_BASH": "true", "BORIS_ANTHROPIC_COMPAT": "1"},
			func(c Config) string { return cmp.Diff([2]bool{true, true}, [2]bool{c.NoBash, c.AnthropicCompat}) }},
		{"default tool set, text only", nil, nil,
			func(c Config) string { return cmp.Diff([2]any{"boris", false}, [2]any{c.Tools, c.StructuredOutput}) }},
		{"claude-code tools, structured", []string{"--tools", "claude-code", "--structured-output"}, nil,
			func(c Config) string {
				return cmp.Diff([2]any{"claude-code", true}, [2]any{c.Tools, c.StructuredOutput})
			}},
		{"tools env", nil, map[string]string{"BORIS_TOOLS": "claude-code", "BORIS_STRUCTURED_OUTPUT": "true"},
			func(c Config) string {
				return cmp.Diff([2]any{"claude-code", true}, [2]any{c.Tools, c.StructuredOutput})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse(tt.args, env(tt.env), "test", &bytes.Buffer{})
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.args, err)
			}
			if diff := tt.check(cfg); diff != "" {
				t.Errorf("Parse(%q): %s", tt.args, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"zero timeout", []string{"--timeout", "0"}, nil, "--timeout must be a positive"},
		{"negative timeout", []string{"--timeout=-5"}, nil, "--timeout must be a positive number of seconds, got -5"},
		{"negative duration timeout", []string{"--timeout=-5s"}, nil, "--timeout must be a positive number of seconds, got -5"},
		{"fractional timeout", []string{"--timeout", "1.5s"}, nil, `--timeout "1.5s" is not a whole number of seconds or a duration such as 90s, 10m or 1h`},
		{"junk timeout", []string{"--timeout", "soon"}, nil, `--timeout "soon" is not a whole number of seconds`},
		{"huge timeout", []string{"--timeout", "99999999999999"}, nil, `--timeout "99999999999999" is too large`},
		{"junk env idle timeout", nil, map[string]string{"BORIS_SESSION_IDLE_TIMEOUT": "a while"}, `$BORIS_SESSION_IDLE_TIMEOUT="a while" is not a whole number of seconds`},
		{"negative background limit", []string{"--background-task-timeout", "-1m"}, nil, "--background-task-timeout must not be negative, got -60"},
		{"bad transport", []string{"--transport", "grpc"}, nil, "--transport"},
		{"bad tool set", []string{"--tools", "cursor"}, nil, "--tools"},
		{"junk size", []string{"--max-file-size", "lots"}, nil, "--max-file-size"},
		{"negative size", []string{"--max-file-size=-1MB"}, nil, "--max-file-size"},
		{"small output budget", []string{"--output-budget", "100"}, nil, "--output-budget must be at least 4000 characters, got 100"},
		{"junk env output budget", nil, map[string]string{"BORIS_OUTPUT_BUDGET": "lots"}, "BORIS_OUTPUT_BUDGET"},
		{"missing workdir", []string{"--workdir", "/does/not/exist"}, nil, "does not exist"},
		{"non-loopback without token", []string{"--host", "0.0.0.0"}, nil, "--token"},
		{"unknown flag", []string{"--frobnicate"}, nil, "unknown flag"},
		{"bad port", []string{"--port", "70000"}, nil, "--port"},
		{"bad env port", nil, map[string]string{"BORIS_PORT": "eighty"}, "BORIS_PORT"},
		{"wildcard origin", []string{"--allow-origin", "*"}, nil, "--allow-origin"},
		{"token and generate", []string{"--token", "a", "--generate-token"}, nil, "choose one"},
		{"bad confine mode", []string{"--confine-bash", "maybe"}, nil, "--confine-bash"},
		{"missing confine-read", []string{"--confine-read", "/does/not/exist"}, nil, "--confine-read: /does/not/exist does not exist"},
		{"confine-write not a directory", []string{"--confine-write", "/etc/hostname"}, nil, "--confine-write: /etc/hostname is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.args, env(tt.env), "test", &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) error = %v, want one mentioning %q", tt.args, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse(%q) error spans lines: %q", tt.args, err)
			}
		})
	}
}

func TestOutputBudget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"flag", []string{"--output-budget", "10000"}, nil, 10_000},
		{"env", nil, map[string]string{"BORIS_OUTPUT_BUDGET": "12000"}, 12_000},
		{"flag over env", []string{"--output-budget=9000"}, map[string]string{"BORIS_OUTPUT_BUDGET": "12000"}, 9_000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse(tt.args, env(tt.env), "test", &bytes.Buffer{})
			if err != nil || cfg.OutputBudget != tt.want {
				t.Errorf("Parse(%q, %v).OutputBudget = %d, %v; want %d", tt.args, tt.env, cfg.OutputBudget, err, tt.want)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := Parse([]string{"--help"}, env(nil), "test", &out); !errors.Is(err, ErrExit) {
		t.Fatalf("Parse(--help) error = %v, want ErrExit", err)
	}
	for _, want := range []string{"--allow-dir", "$BORIS_ALLOW_DIRS", "--max-file-size", "$BORIS_TOKEN", "--anthropic-compat", "--confine-bash", "$BORIS_CONFINE_READ", "$BORIS_CONFINE_WRITE", "--confine-network"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	out.Reset()
	// The program prints the version (cmd/boris's cli.txtar checks it).
	if _, err := Parse([]string{"--version"}, env(nil), "v9.9.9", &out); !errors.Is(err, ErrVersion) || !errors.Is(err, ErrExit) || out.Len() != 0 {
		t.Errorf("Parse(--version) = %q, %v; want nothing printed and ErrVersion", out.String(), err)
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
	}{
		{"10MB", 10_000_000}, {"10MiB", 10 << 20}, {"10M", 10 << 20}, {"512KB", 512_000},
		{"4096", 4096}, {"1.5GB", 1_500_000_000}, {"1kib", 1024}, {"7 B", 7},
	}
	for _, tt := range tests {
		if got, err := ParseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-1", "MB", "10XB", "0", "1e3", "10 MBs", "99999999999GB"} {
		if got, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func FuzzSplitList(f *testing.F) {
	for _, s := range []string{"a,b", "**/*.{pem,key},x", "{a,{b,c}},d", ",,", "}{,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := SplitList(s)
		joined := strings.Join(parts, ",")
		if strings.Count(joined, ",") > strings.Count(s, ",") {
			t.Fatalf("SplitList(%q) = %q invents commas", s, parts)
		}
		for _, p := range parts {
			if p == "" || !strings.Contains(s, p) {
				t.Fatalf("SplitList(%q) = %q: part %q not from input", s, parts, p)
			}
		}
	})
}

func TestRelativeAllowDirAgainstWorkdir(t *testing.T) {
	wd := t.TempDir()
	if err := os.Mkdir(filepath.Join(wd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The process runs from another directory: "." must still mean --workdir.
	t.Chdir(t.TempDir())
	cfg, err := Parse([]string{"--workdir", wd, "--allow-dir", ".", "--allow-dir", "sub"}, env(nil), "test", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{wd, filepath.Join(wd, "sub")}
	if diff := cmp.Diff(want, cfg.AllowDirs); diff != "" {
		t.Errorf("AllowDirs (-want +got):\n%s", diff)
	}
}

func TestTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  s3<cr&t>\n")
	cfg, err := Parse([]string{"--token-file", good}, env(nil), "v1", &bytes.Buffer{})
	if err != nil || cfg.Token != "s3<cr&t>" {
		t.Errorf("--token-file: token %q, err %v; want the file's line, trimmed", cfg.Token, err)
	}
	cfg, err = Parse(nil, env(map[string]string{"BORIS_TOKEN_FILE": good}), "v1", &bytes.Buffer{})
	if err != nil || cfg.Token != "s3<cr&t>" {
		t.Errorf("$BORIS_TOKEN_FILE: token %q, err %v", cfg.Token, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-file", write("empty", " \n")}, "is empty"},
		{[]string{"--token-file", write("lines", "a\nb\n")}, "more than one line"},
		{[]string{"--token-file", dir + "/missing"}, "no such file"},
		{[]string{"--token-file", good, "--token", "x"}, "choose one"},
		{[]string{"--token-file", good, "--generate-token"}, "choose one"},
	} {
		if _, err := Parse(tc.args, env(nil), "v1", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--token-file") {
			t.Errorf("Parse(%q) = %v, want an error about --token-file saying %q", tc.args, err, tc.want)
		}
	}
}

func TestDurationDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse(nil, env(nil), "v1", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.KillGrace != DefaultKillGrace || cfg.OutputDrain != DefaultOutputDrain || cfg.StdioDrain != DefaultStdioDrain {
		t.Errorf("grace and drain times = %v %v %v, want the defaults", cfg.KillGrace, cfg.OutputDrain, cfg.StdioDrain)
	}
}
