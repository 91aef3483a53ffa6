package config

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// settings is a command line with a field of every kind ParseFlags sets.
type settings struct {
	Mode    string   `help:"The mode." default:"fast" enum:"fast,slow" envvar:"T_MODE"`
	Count   int      `help:"How many." default:"3" envvar:"T_COUNT"`
	Dir     []string `help:"A directory (repeatable)." placeholder:"DIR" envvar:"T_DIRS"`
	Quiet   bool     `help:"Say less." envvar:"T_QUIET"`
	Check   bool     `name:"check-all" help:"Check everything." default:"true" negatable:"" envvar:"T_CHECK"`
	Secret  int      `hidden:"" help:"Not for users." envvar:"T_SECRET"`
	Target  string   `arg:"" placeholder:"TARGET" default:"here" help:"Where to go."`
	NoColor bool     `help:"Plain output."`
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	defaults := settings{Mode: "fast", Count: 3, Check: true, Target: "here"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(*settings)
	}{
		{"defaults", nil, nil, func(*settings) {}},
		{"value as next word and after =", []string{"--mode", "slow", "--count=7"}, nil,
			func(s *settings) { s.Mode, s.Count = "slow", 7 }},
		{"negative number as next word", []string{"--count", "-2"}, nil, func(s *settings) { s.Count = -2 }},
		{"last of a repeated flag wins", []string{"--count", "1", "--count", "2"}, nil, func(s *settings) { s.Count = 2 }},
		{"bools", []string{"--quiet", "--no-check-all", "--no-color"}, nil,
			func(s *settings) { s.Quiet, s.Check, s.NoColor = true, false, true }},
		{"bool with a value", []string{"--quiet=true", "--check-all=0"}, nil,
			func(s *settings) { s.Quiet, s.Check = true, false }},
		{"list flag repeated, commas kept", []string{"--dir", "a,b", "--dir={c,d}"}, nil,
			func(s *settings) { s.Dir = []string{"a,b", "{c,d}"} }},
		{"variables", nil, map[string]string{"T_MODE": "slow", "T_COUNT": " 9 ", "T_DIRS": "a,{b,c},,d", "T_QUIET": "1", "T_CHECK": "false", "T_SECRET": "4"},
			func(s *settings) {
				s.Mode, s.Count, s.Dir, s.Quiet, s.Check, s.Secret = "slow", 9, []string{"a", "{b,c}", "d"}, true, false, 4
			}},
		{"flags beat variables", []string{"--count", "5", "--dir", "x"}, map[string]string{"T_COUNT": "9", "T_DIRS": "a,b"},
			func(s *settings) { s.Count, s.Dir = 5, []string{"x"} }},
		{"positional", []string{"--quiet", "there"}, nil, func(s *settings) { s.Quiet, s.Target = true, "there" }},
		{"positional after --", []string{"--", "--quiet"}, nil, func(s *settings) { s.Target = "--quiet" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got settings
			if err := ParseFlags(&got, tt.args, env(tt.env)); err != nil {
				t.Fatalf("ParseFlags(%q): %v", tt.args, err)
			}
			want := defaults
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseFlags(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--frobnicate"}, nil, "unknown flag --frobnicate: see --help"},
		{[]string{"-q"}, nil, "unknown flag -q: see --help"},
		{[]string{"--no-quiet"}, nil, "unknown flag --no-quiet: see --help"}, // not negatable
		{[]string{"--secret=1", "--target", "x"}, nil, "unknown flag --target: see --help"},
		{[]string{"--mode"}, nil, "--mode needs a value"},
		{[]string{"--mode", "--quiet"}, nil, "--mode needs a value"},
		{[]string{"--mode", "medium"}, nil, `--mode "medium" is not fast or slow`},
		{[]string{"--count", "many"}, nil, `--count "many" is not a whole number`},
		{[]string{"--quiet=maybe"}, nil, `--quiet "maybe" is not true or false`},
		{[]string{"--no-check-all=true"}, nil, "--no-check-all takes no value"},
		{nil, map[string]string{"T_COUNT": "eighty"}, `$T_COUNT="eighty" is not a whole number`},
		{nil, map[string]string{"T_MODE": "medium"}, `$T_MODE="medium" is not fast or slow`},
		{nil, map[string]string{"T_QUIET": "yes"}, `$T_QUIET="yes" is not true or false`},
		{[]string{"a", "b"}, nil, `unexpected argument "b": give one TARGET`},
	}
	for _, tt := range tests {
		var s settings
		err := ParseFlags(&s, tt.args, env(tt.env))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseFlags(%q, %v) = %v, want %q", tt.args, tt.env, err, tt.want)
		}
	}
	var c cli
	if err := ParseFlags(&c, []string{"stdio"}, env(nil)); err == nil || !strings.Contains(err.Error(), `unexpected argument "stdio"`) {
		t.Errorf("a word where no positional argument is taken: %v", err)
	}
}

func TestParseFlagsHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--count", "x", "--help"}, {"--mode", "slow", "-h", "--frob"}} {
		var s settings
		if err := ParseFlags(&s, args, env(nil)); !errors.Is(err, ErrHelp) {
			t.Errorf("ParseFlags(%q) = %v, want ErrHelp", args, err)
		}
	}
	var out bytes.Buffer
	WriteHelp(&out, "tool [TARGET] [flags]", "Does things.", &settings{})
	want := `Usage: tool [TARGET] [flags]

Does things.

Arguments:
  [TARGET]
        Where to go. Default: here.

Flags:
  -h, --help
        Show this help.
  --mode=fast
        The mode. ($T_MODE)
  --count=3
        How many. ($T_COUNT)
  --dir=DIR
        A directory (repeatable). ($T_DIRS)
  --quiet
        Say less. ($T_QUIET)
  --[no-]check-all
        Check everything. Default: true. ($T_CHECK)
  --no-color
        Plain output.
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("help (-want +got):\n%s", diff)
	}
}

func TestWrap(t *testing.T) {
	t.Parallel()
	got := wrap("one two three four five six-seven-eight-nine-ten", 14, "  ")
	want := "  one two\n  three four\n  five\n  six-seven-eight-nine-ten"
	if got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}
