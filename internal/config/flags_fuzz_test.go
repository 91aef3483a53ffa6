package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseFlags parses arbitrary command lines and environments: ParseFlags never
// panics, its errors are one line, and what it parses, written back as a command line
// with every flag given as --name=value, parses to the same settings.
func FuzzParseFlags(f *testing.F) {
	f.Add("--mode\x00slow\x00--count=7\x00there", "T_DIRS=a,b")
	f.Add("--no-check-all\x00--dir\x00x\x00--dir=y\x00--\x00--target", "T_COUNT=-2\x00T_QUIET=true")
	f.Add("--count\x00-2\x00--quiet=0", "")
	f.Fuzz(func(t *testing.T, argLine, envLine string) {
		var args []string
		if argLine != "" {
			args = strings.Split(argLine, "\x00")
		}
		env := map[string]string{}
		for kv := range strings.SplitSeq(envLine, "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
		var s settings
		err := ParseFlags(&s, args, func(k string) string { return env[k] })
		if errors.Is(err, ErrHelp) {
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseFlags(%q) error of several lines: %q", args, err)
			}
			return
		}
		var again settings
		if err := ParseFlags(&again, render(s), func(string) string { return "" }); err != nil {
			t.Fatalf("ParseFlags(%q) = %+v, which written back as %q fails: %v", args, s, render(s), err)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("ParseFlags(%q) then again from %q (-first +again):\n%s", args, render(s), diff)
		}
	})
}

// render writes s back as a command line.
func render(s settings) []string {
	args := []string{"--mode=" + s.Mode, fmt.Sprint("--count=", s.Count), fmt.Sprint("--quiet=", s.Quiet),
		fmt.Sprint("--check-all=", s.Check), fmt.Sprint("--secret=", s.Secret), fmt.Sprint("--no-color=", s.NoColor)}
	for _, d := range s.Dir {
		args = append(args, "--dir="+d)
	}
	return append(args, "--", s.Target)
}
