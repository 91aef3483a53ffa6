package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTransportChoice: a transport named is kept; with none named, a setting only HTTP
// uses, given as a flag or a variable, means http whatever stdin is, and otherwise a pipe
// as stdin means stdio; TransportWhy says why whenever Boris chose. A named stdio refuses
// a flag only HTTP uses and lists such variables as ignored.
func TestTransportChoice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		pipe      bool
		transport string
		why       string // TransportWhy, or the error when transport is ""
		ignored   []string
	}{
		{"pipe", nil, nil, true, "stdio", "stdin is a pipe and no HTTP setting was given (--transport http or --port serves HTTP)", nil},
		{"no pipe", nil, nil, false, "http", "stdin is not a pipe", nil},
		{"pipe and port", []string{"--port", "18940", "--workdir", "."}, nil, true, "http", "--port is for HTTP", nil},
		{"pipe and port=", []string{"--port=18940"}, nil, true, "http", "--port is for HTTP", nil},
		{"pipe and port variable", nil, map[string]string{"BORIS_PORT": "18940"}, true, "http", "$BORIS_PORT is for HTTP", nil},
		{"pipe and host", []string{"--host", "127.0.0.1"}, nil, true, "http", "--host is for HTTP", nil},
		{"pipe and token file variable", nil, map[string]string{"BORIS_GENERATE_TOKEN": "true"}, true, "http", "$BORIS_GENERATE_TOKEN is for HTTP", nil},
		{"pipe and origin", []string{"--allow-origin", "https://a.example"}, nil, true, "http", "--allow-origin is for HTTP", nil},
		{"pipe and no auth", []string{"--insecure-no-auth"}, nil, true, "http", "--insecure-no-auth is for HTTP", nil},
		{"pipe and max sessions", []string{"--max-sessions", "3"}, nil, true, "http", "--max-sessions is for HTTP", nil},
		{"pipe and stateless", []string{"--stateless"}, nil, true, "http", "--stateless is for HTTP", nil},
		{"pipe and idle timeout", []string{"--session-idle-timeout", "60"}, nil, true, "http", "--session-idle-timeout is for HTTP", nil},
		{"pipe and request size", []string{"--max-request-size", "1MiB"}, nil, true, "http", "--max-request-size is for HTTP", nil},
		{"pipe and a token for the live view", []string{"--watch", "127.0.0.1:0", "--generate-token"}, nil, true, "stdio", "stdin is a pipe and no HTTP setting was given (--transport http or --port serves HTTP)", nil},
		{"pipe and other settings", []string{"--timeout", "60", "--tools", "codex", "--no-watch"}, nil, true, "stdio", "stdin is a pipe and no HTTP setting was given (--transport http or --port serves HTTP)", nil},
		{"named http", []string{"--transport", "http"}, nil, true, "http", "", nil},
		{"named stdio", []string{"--transport=stdio"}, nil, false, "stdio", "", nil},
		{"named stdio variable", nil, map[string]string{"BORIS_TRANSPORT": "stdio"}, false, "stdio", "", nil},
		{"named stdio ignores variables", []string{"--transport", "stdio"}, map[string]string{"BORIS_HOST": "0.0.0.0", "BORIS_PORT": "9"}, true, "stdio", "", []string{"$BORIS_HOST", "$BORIS_PORT"}},
		{"named stdio and a token for the live view", []string{"--transport", "stdio", "--watch", "127.0.0.1:0", "--token", "0123456789abcdef"}, nil, true, "stdio", "", nil},
		{"named stdio refuses a port", []string{"--transport", "stdio", "--port", "18940"}, nil, true, "", "--port is for HTTP, but --transport names stdio: leave out --port, or serve HTTP (--transport http)", nil},
		{"named stdio variable refuses a flag", []string{"--stateless"}, map[string]string{"BORIS_TRANSPORT": "stdio"}, true, "", "--stateless is for HTTP, but $BORIS_TRANSPORT names stdio", nil},
		{"named stdio refuses a token", []string{"--transport", "stdio", "--token-file", "/nonexistent"}, nil, true, "", "--token-file is for HTTP", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ParseStdin(tt.args, env(tt.env), "test", &bytes.Buffer{}, tt.pipe)
			if tt.transport == "" {
				if err == nil || !strings.Contains(err.Error(), tt.why) {
					t.Fatalf("ParseStdin(%q, %v, pipe %v) error = %v, want one saying %q", tt.args, tt.env, tt.pipe, err, tt.why)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStdin(%q, %v, pipe %v) error: %v", tt.args, tt.env, tt.pipe, err)
			}
			if cfg.Transport != tt.transport || cfg.TransportWhy != tt.why {
				t.Errorf("ParseStdin(%q, %v, pipe %v) = %s because %q, want %s because %q", tt.args, tt.env, tt.pipe, cfg.Transport, cfg.TransportWhy, tt.transport, tt.why)
			}
			if diff := cmp.Diff(tt.ignored, cfg.HTTPIgnored); diff != "" {
				t.Errorf("ParseStdin(%q, %v).HTTPIgnored (-want +got):\n%s", tt.args, tt.env, diff)
			}
		})
	}
}
