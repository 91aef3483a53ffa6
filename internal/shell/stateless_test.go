package shell

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

func TestStateless(t *testing.T) {
	t.Parallel()
	stateless := []string{
		"true",
		"  ls -la  \n",
		"go test ./... 2>&1 | tail -n 20",
		"git status --short",
		"git commit -m 'fix: a $value; in quotes' --author=\"A B <a@b.c>\"",
		"grep -rn foo src >out.txt 2>/dev/null",
		"cat *.go | wc -l",
		"ls ~/src --color=never",
		"echo héllo wörld",
		"./build.sh --flag=1 &>log",
		"/usr/bin/env",
		"make -j2 all >&2",
		"pwd",
		"echo 'multi\nline in single quotes'",
		"make && ./bin/app --serve",
		"go build ./... && go test ./... 2>&1 | tail -n 5",
		"git add -A && git commit -m 'a message; with && in it'",
		"ls || echo none",
		"ls;",
		"ls; pwd\nwc -l *.go",
		"server --port 8080 &",
		"server & sleep 1; curl localhost:8080",
		"echo a&b",
		"make\n\n./app\n",
		"make &&\n  ./app |\n  tail",
	}
	for _, s := range stateless {
		if !Stateless(s, nil) {
			t.Errorf("Stateless(%q) = false, want true", s)
		}
	}
	stateful := []string{
		"",
		"cd /tmp",
		"export FOO=1",
		"FOO=1",
		"FOO=1 ls",
		"PATH=/x:$PATH",
		"ls; cd /",
		"ls && cd /",
		"ls || cd /",
		"ls\ncd /",
		"sleep 1 & wait",
		"ls |",
		"| ls",
		"ls |& cat",
		"; ls",
		"ls ;; pwd",
		"ls &&",
		"ls ||",
		"ls && && pwd",
		"cat <<EOF\nhi\nEOF",
		"ls && export X=1",
		"ls\nFOO=1",
		"ls & cd /",
		"ls | cd /", // conservative: every command name is checked
		"source ./env.sh",
		". ./env.sh",
		"eval x",
		"exec ls",
		"set -a",
		"read VAR",
		"printf -v X hi",
		"declare -x X=1",
		"unset HOME",
		"pushd /tmp",
		"\"cd\" /tmp",
		"'cd' /tmp",
		"c\\d /tmp",
		"$(echo export) X=1",
		"`echo cd` /",
		"echo ${X:=1}",
		"echo $((X=1))",
		"echo \"${X:=1}\"",
		"echo \"`cd /`\"",
		"((X++))",
		"[[ X++ -eq 0 ]]",
		"for PATH in a; do :; done",
		"{ cd /; }",
		"(cd /)",
		"ls {a,b}",
		"exec {fd}>/dev/null",
		"e*port X=1",
		"ls # comment",
		"echo 'unterminated",
		"echo \"unterminated",
		"ls >| out",
		"ls>out",
		"! ls",
		"time ls",
		":",
		"mapfile X < f",
		"getopts ab X",
		"let X=1",
		"wait -p X",
		"coproc ls",
		"select X in a; do break; done",
		"command cd /",
		"builtin cd /",
		"shopt -s lastpipe",
		"alias ls=cd",
		"trap 'cd /' EXIT",
		"ls\r",
	}
	for _, s := range stateful {
		if Stateless(s, nil) {
			t.Errorf("Stateless(%q) = true, want false", s)
		}
	}
	for _, kv := range []string{"BASH_ENV=/x", "ENV=/x", "SHELLOPTS=allexport", "BASHOPTS=lastpipe", "BASH_FUNC_ls%%=() { cd /; }"} {
		if Stateless("ls", []string{"HOME=/root", kv}) {
			t.Errorf("Stateless(ls) with %s = true, want false", kv)
		}
	}
}

// TestStatelessKnowsTheShellsWords checks the list of builtins and keywords against
// those of the bash installed here: a builtin it does not know would pass for a command.
func TestStatelessKnowsTheShellsWords(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no /bin/bash")
	}
	out, err := exec.Command("/bin/bash", "-c", "compgen -b; compgen -k").Output()
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(string(out))
	if len(words) < 50 {
		t.Fatalf("compgen listed only %d words: %q", len(words), words)
	}
	for _, w := range words {
		if !isShellWord(w) {
			t.Errorf("bash's %q is missing from isShellWord", w)
		}
		if Stateless(w+" x", nil) && !slices.Contains([]string{"true", "false", "echo", "pwd", "test", "type"}, w) {
			t.Errorf("Stateless(%q) = true for a builtin that may change state", w+" x")
		}
	}
}

// TestStatelessAgreesWithBash runs random scripts that Stateless passes through bash with
// the state report forced on, and checks that none of them changed the working directory
// or an exported variable.
func TestStatelessAgreesWithBash(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no /bin/bash")
	}
	commands := []string{
		"true", "false", "echo", "ls", "cat", "pwd", "test", "type", "cd", "export", "unset",
		"read", "source", ".", "eval", "set", "printf", "declare", "pushd", "popd", "exec",
		"X=1", "PATH=/x", "(cd /)", "{ cd /; }", "$(echo cd)", "c\\d", "'cd'", "\"cd\"",
		"e*port", "((X++))", "[[", "for", "!", "time", "command", "builtin",
	}
	args := []string{
		"-la", "x", "/", "..", "~", "*", "a=b", "--flag=1", "X=1", "'a b'", "\"a b\"", "\"$X\"",
		"$X", "${X:=1}", "$(cd /)", "`cd /`", ">", "/dev/null", "2>&1", "&>", "<", ">>",
		"{a,b}", "#", "\\", "<<EOF", "\"", "'",
	}
	operators := []string{";", "&&", "||", "|", "&", "\n", " "}
	rnd := rand.New(rand.NewPCG(1, 2))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "KEEP=1", "X=0", "OLDPWD=/"}
	checked := 0
	for range 3000 {
		var b strings.Builder
		for n := 1 + rnd.IntN(3); n > 0; n-- {
			b.WriteString(commands[rnd.IntN(len(commands))])
			for range rnd.IntN(3) {
				b.WriteString(" " + args[rnd.IntN(len(args))])
			}
			if n > 1 {
				b.WriteString(" " + operators[rnd.IntN(len(operators))] + " ")
			}
		}
		script := b.String()
		if !Stateless(script, base) {
			continue
		}
		checked++
		c := command(t, "/bin/bash", script)
		c.Env = append(slices.Clone(base), "BASHOPTS=") // not stateless: the shell reports
		c.Grace = 50 * time.Millisecond
		// Only a guard against a hang: none of these scripts waits for anything.
		ctx, cancel := context.WithTimeout(t.Context(), testutil.Within)
		p, res, err := Run(ctx, c)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		if res.Env == nil {
			t.Errorf("%q: the shell did not report", script)
			continue
		}
		if res.Cwd != c.Dir {
			t.Errorf("%q: cwd became %q", script, res.Cwd)
		}
		for _, kv := range base {
			if !slices.Contains(res.Env, kv) {
				t.Errorf("%q: %s changed (env %q)", script, kv, res.Env)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d of the random scripts were stateless: the test checks too little", checked)
	}
	t.Logf("%d stateless scripts checked against bash", checked)
}
