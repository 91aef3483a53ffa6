package shell

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// markVar names the environment variable that marks a command's processes.
const markVar = "BORIS_RUN"

// invocation is how a command's shell is started.
type invocation struct {
	args, env []string
	reported  bool   // the shell writes a state report on fd 3
	moves     bool   // the shell moves itself into its cgroups first, through fds 4 and 5 (moveLine)
	script    string // a file holding the script, to remove once the shell is done; or ""
}

// maxScriptArg is the longest script passed to the shell as an argument. Linux refuses
// an argument over 128 KiB, so a longer script (a large here-document, say) goes in a
// file the shell reads; then $0 and messages name that file.
const maxScriptArg = 64 << 10

// wrap returns how to start the shell for c.
//
// A [Stateless] script runs as `shell -c script` and reports nothing.
//
// The script must run as one unit with nothing appended (a trailing comment or heredoc
// would swallow appended text), and report where it ended on a channel its output cannot
// reach: an unnamed file on fd 3 (in memory where the kernel offers that; see
// newReportFile), which the shell moves out of the way of the script's own
// redirections. Under bash, a BASH_ENV file read before the script installs an EXIT trap
// that writes the report; the script itself is passed to -c untouched, so messages, $0
// and line numbers are bash's own. Elsewhere (a POSIX sh, or an environment where
// BASH_ENV would not be honoured) the script is passed as an argument and run with eval
// under the same trap.
//
// A shell that moves itself into its cgroups ([Command.Launch], or a v1 pids hierarchy)
// runs [moveLine] first, and a shell limited by RLIMIT_NPROC its limit line: from the
// BASH_ENV file, or in front of the eval. So a stateless script gets a BASH_ENV file that
// only runs those, or, where there can be none, has them on its first line.
//
// limit, if not "", is a line the shell runs first too ([limitLine]).
func wrap(c Command, moves bool, limit string) (invocation, error) {
	inv := invocation{env: make([]string, 0, len(c.Env)+3), moves: moves}
	for _, kv := range c.Env {
		if !strings.HasPrefix(kv, "PWD=") && !strings.HasPrefix(kv, markVar+"=") {
			inv.env = append(inv.env, kv)
		}
	}
	inv.env = append(inv.env, "PWD="+c.Dir)
	if c.Mark != "" {
		inv.env = append(inv.env, markVar+"="+c.Mark)
	}
	// run is the script as the shell's arguments: `-c -- script`, or the file holding it.
	run := []string{"-c", "--", c.Script}
	if len(c.Script) > maxScriptArg {
		f, err := writeScript(c)
		if err != nil {
			return invocation{}, err
		}
		inv.script, run = f, []string{"--", f}
	}
	stateless := Stateless(c.Script, c.Env)
	var first []string
	if moves {
		first = append(first, moveLine)
	}
	if limit != "" {
		first = append(first, limit)
	}
	prefix := ""
	if len(first) > 0 {
		prefix = strings.Join(first, "; ") + "; "
	}
	switch {
	case stateless && prefix == "":
		inv.args = run
	case useBashEnv(c):
		name, text := initFile(stateless, first)
		init := filepath.Join(c.StateDir, name)
		if err := writeInit(init, text); err != nil {
			removeScript(inv.script)
			return invocation{}, err
		}
		inv.args, inv.env, inv.reported = run, append(inv.env, "BASH_ENV="+init), !stateless
	case stateless && inv.script == "":
		// On the script's first line, so that its line numbers and messages stay its own.
		inv.args = []string{"-c", "--", prefix + c.Script}
	case inv.script != "":
		inv.args, inv.reported = []string{"-c", prefix + sourceWrapper, filepath.Base(c.Shell), inv.script}, true
	default:
		inv.args, inv.reported = []string{"-c", prefix + evalWrapper, filepath.Base(c.Shell), c.Script}, true
	}
	return inv, nil
}

// initFile returns the name and text of the BASH_ENV file for a script that is stateless
// or not, run by a shell that runs the lines first before it (moving into its cgroups,
// limiting its processes).
func initFile(stateless bool, first []string) (name, text string) {
	lines := ""
	if len(first) > 0 {
		lines = strings.Join(first, "\n") + "\n"
	}
	// Named after what it holds: the file is written once per state directory.
	suffix := ""
	if lines != "" {
		sum := sha256.Sum256([]byte(lines))
		suffix = "-" + hex.EncodeToString(sum[:4])
	}
	switch {
	case stateless:
		return "bash-first" + suffix, "unset BASH_ENV\n" + lines
	case lines != "":
		return "bash-env" + suffix, "unset BASH_ENV\n" + lines + strings.TrimPrefix(bashInit, "unset BASH_ENV\n")
	}
	return "bash-env", bashInit
}

// writeScript writes a script too long for an argument to a private file.
func writeScript(c Command) (string, error) {
	f, err := os.CreateTemp(c.StateDir, c.Name+"-*.sh")
	if err != nil {
		return "", fmt.Errorf("writing the script to a file: %w", err)
	}
	_, err = f.WriteString(c.Script)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("writing the script to a file: %w", err)
	}
	return f.Name(), nil
}

func removeScript(path string) {
	if path != "" {
		_ = os.Remove(path)
	}
}

// moveLine moves the shell into its command's cgroup through fd 4, open on the cgroup's
// cgroup.procs, and into its v1 pids cgroup through fd 5 (either may be /dev/null), and
// closes them, before anything else runs. Writing 0 there moves the
// writer; Landlock checks files when they are opened, so a confined shell can use a
// descriptor opened for it.
const moveLine = `{ echo 0 2>&- >&4 && echo 0 2>&- >&5 && exec 4>&- 5>&-; } || { echo "boris: the shell could not move into its command's cgroup" >&2; exit 126; }`

// bashInit is the BASH_ENV file. {fd} redirections put the report's file above 9,
// where scripts rarely reach. The trap's call is made with stderr closed off, so that a
// script's `set -x` does not trace it.
const bashInit = `unset BASH_ENV
exec {__boris_fd}>&3 3>&-
__boris_exit() { { set +euvx; { builtin pwd; builtin printf '\0'; builtin export -p; builtin printf '\0'; } >&"$__boris_fd"; } 2>/dev/null; }
trap '{ __boris_exit; } 2>/dev/null' EXIT
`

// evalWrapper is one line so that eval's line numbers are the script's own.
const evalWrapper = `exec 9>&3 3>&-; __boris_c=$1; set --; ` + shTrap + `; eval "$__boris_c"`

// sourceWrapper runs a script from a file, under the same trap.
const sourceWrapper = `exec 9>&3 3>&-; __boris_f=$1; set --; ` + shTrap + `; . "$__boris_f"`

// shTrap reports the state from a POSIX shell.
const shTrap = `trap '{ set +euvx; { command pwd; printf "\0"; command export -p; printf "\0"; } >&9; } 2>/dev/null' EXIT`

func useBashEnv(c Command) bool {
	if filepath.Base(c.Shell) != "bash" || c.StateDir == "" || strings.ContainsAny(c.StateDir, "$`\\\"' \t\n") {
		return false
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "BASH_ENV", k == "POSIXLY_CORRECT":
			return false // bash would not read ours, or the user relies on theirs
		case k == "SHELLOPTS" && strings.Contains(v, "posix"):
			return false
		}
	}
	return true
}

// writeInit writes a BASH_ENV file, text, once per state directory.
func writeInit(path, text string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp := path + "." + rand.Text()
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return fmt.Errorf("writing shell setup: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing shell setup: %w", err)
	}
	return nil
}
