package config

import (
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestQuickParseAgreesWithKong checks that whatever quickParse takes, kong takes too and
// reads the same way, over every flag with plain and awkward values, given as flags and
// as variables, alone and in random combinations; and that it does take the plain cases.
func TestQuickParseAgreesWithKong(t *testing.T) {
	t.Parallel()
	flags := quickFlags()
	values := []string{"", "x", "stdio", "http", "on", "off", "auto", "warn", "json", "boris", "claude-code",
		"0", "1", "-1", "7", "010", "0x10", "+5", " 5", "1_000", "99999999999999999999",
		"true", "false", "TRUE", "t", "yes", "no", "10MB", "a,b", "{a,b}", `a\,b`, "-x", "--help", "a=b", " ", ",", "~/x"}
	type input struct {
		args []string
		env  map[string]string
	}
	var cases []input
	for _, f := range flags {
		n := "--" + f.name
		cases = append(cases, input{args: []string{n}}, input{args: []string{"--no-" + f.name}},
			input{args: []string{n, n}}, input{args: []string{n, "a", n, "b"}})
		for _, v := range values {
			cases = append(cases, input{args: []string{n, v}}, input{args: []string{n + "=" + v}},
				input{env: map[string]string{f.envvar: v}}, input{args: []string{n + "=" + v}, env: map[string]string{f.envvar: "x"}})
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range flags {
			if !yield(n) {
				return
			}
		}
	})
	r := rand.New(rand.NewPCG(1, 2))
	for range 1500 {
		var in input
		in.env = map[string]string{}
		for range r.IntN(5) {
			f := flags[names[r.IntN(len(names))]]
			v := values[r.IntN(len(values))]
			switch r.IntN(4) {
			case 0:
				in.args = append(in.args, "--"+f.name, v)
			case 1:
				in.args = append(in.args, "--"+f.name+"="+v)
			case 2:
				in.args = append(in.args, "--"+f.name)
			default:
				in.env[f.envvar] = v
			}
		}
		cases = append(cases, in)
	}
	cases = append(cases, input{args: []string{"--help"}}, input{args: []string{"-h"}}, input{args: []string{"--version"}},
		input{args: []string{"stdio"}}, input{args: []string{"--"}}, input{args: []string{"--transport", "stdio", "extra"}})

	taken := 0
	for _, in := range cases {
		getenv := func(k string) string { return in.env[k] }
		quick, ok := quickParse(in.args, getenv)
		if !ok {
			continue
		}
		taken++
		slow, exited, err := kongParse(in.args, getenv, "test", io.Discard)
		if err != nil || exited {
			t.Errorf("args %q, env %v: quickParse took them, kong did not: %v (exited %v)", in.args, in.env, err, exited)
			continue
		}
		if !reflect.DeepEqual(quick, slow) {
			t.Errorf("args %q, env %v: quickParse read\n%+v\nkong read\n%+v", in.args, in.env, quick, slow)
		}
	}
	if taken < len(cases)/10 {
		t.Errorf("quickParse took only %d of %d cases", taken, len(cases))
	}
	for _, plain := range [][]string{
		nil,
		{"--transport", "stdio"},
		{"--transport=stdio", "--workdir", "/tmp", "--log-level", "error", "--no-require-view-before-edit"},
		{"--port", "9000", "--host", "0.0.0.0", "--token-file", "/run/token", "--allow-dir", "src", "--allow-dir", "docs", "--no-bash"},
	} {
		if _, ok := quickParse(plain, func(string) string { return "" }); !ok {
			t.Errorf("quickParse left %q to kong", plain)
		}
	}
	if _, ok := quickParse(nil, func(k string) string {
		return map[string]string{"BORIS_TRANSPORT": "stdio", "BORIS_DENY_DIRS": ".env,**/*.{pem,key}"}[k]
	}); !ok {
		t.Error("quickParse left plain variables to kong")
	}
}

// TestQuickFlagsAreKongs checks that quickParse knows kong's flags by kong's names.
func TestQuickFlagsAreKongs(t *testing.T) {
	t.Parallel()
	var c cli
	parser, err := kong.New(&c)
	if err != nil {
		t.Fatal(err)
	}
	var kongNames []string
	for _, f := range parser.Model.Flags {
		if f.Name != "help" && f.Name != "version" {
			kongNames = append(kongNames, f.Name)
		}
	}
	var quickNames []string
	for n, f := range quickFlags() {
		quickNames = append(quickNames, n)
		if kf := kongFlag(parser, n); kf == nil || kf.Tag.Negatable != "" != f.negatable || kf.Tag.Get("envvar") != f.envvar {
			t.Errorf("flag %s: kong has %+v", n, kf)
		}
	}
	slices.Sort(kongNames)
	slices.Sort(quickNames)
	if !slices.Equal(kongNames, quickNames) {
		t.Errorf("quickParse knows flags\n%s\nkong has\n%s", strings.Join(quickNames, " "), strings.Join(kongNames, " "))
	}
}

func kongFlag(k *kong.Kong, name string) *kong.Flag {
	for _, f := range k.Model.Flags {
		if f.Name == name {
			return f
		}
	}
	return nil
}
