package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/pathscope"
)

// Instructions is the text sent to clients at initialize: what the tools are and what is in
// scope. It only states rules that are in force.
func Instructions(cfg *config.Config, scope *pathscope.Resolver, policy *confine.Policy) string {
	names := Enabled(cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "Boris gives you tools to work on code on this machine: %s.", strings.Join(names, ", "))
	for _, bash := range []string{"bash", "Bash"} {
		if slices.Contains(names, bash) {
			fmt.Fprintf(&b, " %s runs each command in a fresh shell whose working directory and exported variables persist across calls (a cd or export in one call holds for the next); use run_in_background for servers and long jobs.", bash)
		}
	}
	if slices.Contains(names, "exec_command") {
		b.WriteString(" exec_command runs each command in a fresh shell, in workdir (default: the session's working directory); a command still running after yield_time_ms returns a session ID: poll it, or type into it, with write_stdin.")
	}
	if slices.Contains(names, "task_input") {
		b.WriteString(" For interactive programs (a REPL, a prompt that asks y/N or a password, a debugger, git add -p, vim, less), run bash with tty: true: the call comes back as a task once the program waits for input, and task_input types at it and returns its answer (or its screen, for a full-screen program).")
	}
	if cfg.RequireViewBeforeEdit && (slices.Contains(names, "str_replace") || slices.Contains(names, "str_replace_editor")) {
		b.WriteString(" View a file (or write it) in this session before editing it.")
	}
	if cfg.RequireViewBeforeEdit && (slices.Contains(names, "Edit") || slices.Contains(names, "Write")) {
		b.WriteString(" Read an existing file in this session before Edit, MultiEdit or Write, and again after it changes on disk.")
	}
	fmt.Fprintf(&b, " Relative paths are taken against the session's working directory, which starts at %s.", cfg.Workdir)
	if scope.Confined() {
		fmt.Fprintf(&b, " File tools may only touch paths under %s.", strings.Join(scope.Roots(), ", "))
	}
	if rules := scope.DenyRules(); len(rules) > 0 {
		fmt.Fprintf(&b, " File tools hide paths matching: %s.", strings.Join(rules, ", "))
	}
	if slices.Contains(names, "bash") || slices.Contains(names, "Bash") || slices.Contains(names, "exec_command") {
		writeConfinement(&b, scope, policy)
	}
	return b.String()
}

// writeConfinement says how far the path rules and the network hold for commands.
func writeConfinement(b *strings.Builder, scope *pathscope.Resolver, policy *confine.Policy) {
	paths := policy != nil && policy.Paths()
	switch {
	case paths:
		fmt.Fprintf(b, " bash commands are confined by the kernel (Landlock): they may read and write only under %s and $TMPDIR (a private temporary directory), read and run programs only under %s, list any directory, and get \"Permission denied\" for anything else.",
			strings.Join(policy.Writable(), ", "), strings.Join(policy.Readable(), ", "))
		if len(scope.DenyRules()) > 0 {
			b.WriteString(" The hidden paths are hidden from file tools only; commands can read them.")
		}
	case scope.Confined() || len(scope.DenyRules()) > 0:
		b.WriteString(" These path rules do not confine bash.")
	}
	if policy != nil && policy.Network() {
		b.WriteString(" bash commands cannot open TCP connections or listen on TCP ports.")
	}
}
