package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestTransportChoice: a transport named is kept; with none named, a flag only HTTP uses
// means http whatever stdin is, and otherwise a pipe as stdin means stdio, whatever
// variables only HTTP uses say (an image's or a shell's environment serves many runs);
// TransportWhy says why whenever Boris chose. A named stdio refuses a flag only HTTP uses.
func TestTransportChoice(t *testing.T) {
	t.Parallel()
	const piped = "stdin is a pipe and no HTTP flag was given (--transport http or --port serves HTTP)"
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		pipe      bool
		transport string
		why       string // TransportWhy, or what the error says when transport is ""
	}{
		{"pipe", nil, nil, true, "stdio", piped},
		{"no pipe", nil, nil, false, "http", "stdin is not a pipe"},
		{"pipe and port", []string{"--port", "18940", "--workdir", "."}, nil, true, "http", "--port is for HTTP"},
		{"pipe and port=", []string{"--port=18940"}, nil, true, "http", "--port is for HTTP"},
		{"pipe and host", []string{"--host", "127.0.0.1"}, nil, true, "http", "--host is for HTTP"},
		{"pipe and token", []string{"--token", "0123456789abcdef"}, nil, true, "http", "--token is for HTTP"},
		{"pipe and generated token", []string{"--generate-token"}, nil, true, "http", "--generate-token is for HTTP"},
		{"pipe and origin", []string{"--allow-origin", "https://a.example"}, nil, true, "http", "--allow-origin is for HTTP"},
		{"pipe and no auth", []string{"--insecure-no-auth"}, nil, true, "http", "--insecure-no-auth is for HTTP"},
		{"pipe and max sessions", []string{"--max-sessions", "3"}, nil, true, "http", "--max-sessions is for HTTP"},
		{"pipe and stateless", []string{"--stateless"}, nil, true, "http", "--stateless is for HTTP"},
		{"pipe and idle timeout", []string{"--session-idle-timeout", "60"}, nil, true, "http", "--session-idle-timeout is for HTTP"},
		{"pipe and request size", []string{"--max-request-size", "1MiB"}, nil, true, "http", "--max-request-size is for HTTP"},
		{"pipe and the first of two", []string{"--stateless", "--port", "1"}, nil, true, "http", "--port is for HTTP"},
		{"pipe and variables", nil, map[string]string{"BORIS_HOST": "0.0.0.0", "BORIS_PORT": "8080", "BORIS_TOKEN": "0123456789abcdef"}, true, "stdio",
			"stdin is a pipe and no HTTP flag was given ($BORIS_HOST $BORIS_PORT $BORIS_TOKEN ignored; --transport http or --port serves HTTP)"},
		{"no pipe and variables", nil, map[string]string{"BORIS_PORT": "8080"}, false, "http", "stdin is not a pipe"},
		{"pipe and a token for the live view", []string{"--watch", "127.0.0.1:0", "--generate-token"}, nil, true, "stdio", piped},
		{"pipe and other settings", []string{"--timeout", "60", "--tools", "codex", "--no-watch"}, nil, true, "stdio", piped},
		{"named http", []string{"--transport", "http"}, nil, true, "http", ""},
		{"named stdio", []string{"--transport=stdio"}, nil, false, "stdio", ""},
		{"named stdio variable", nil, map[string]string{"BORIS_TRANSPORT": "stdio"}, false, "stdio", ""},
		{"named stdio and variables", []string{"--transport", "stdio"}, map[string]string{"BORIS_HOST": "0.0.0.0", "BORIS_PORT": "9"}, true, "stdio", ""},
		{"named stdio and a token for the live view", []string{"--transport", "stdio", "--watch", "127.0.0.1:0", "--token", "0123456789abcdef"}, nil, true, "stdio", ""},
		{"named stdio refuses a port", []string{"--transport", "stdio", "--port", "18940"}, nil, true, "", "--port is for HTTP, but --transport names stdio: leave out --port, or serve HTTP (--transport http)"},
		{"named stdio variable refuses a flag", []string{"--stateless"}, map[string]string{"BORIS_TRANSPORT": "stdio"}, true, "", "--stateless is for HTTP, but $BORIS_TRANSPORT names stdio"},
		{"named stdio refuses a token file", []string{"--transport", "stdio", "--token-file", "/nonexistent"}, nil, true, "", "--token-file is for HTTP"},
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
		})
	}
}
