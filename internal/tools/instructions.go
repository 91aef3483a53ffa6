package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/pathscope"
)

// Instructions is the text sent to clients at initialize: what the tools are and what is in
// scope. It only states rules that are in force.
func Instructions(cfg *config.Config, scope *pathscope.Resolver) string {
	names := Enabled(cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "Boris gives you tools to work on code on this machine: %s.", strings.Join(names, ", "))
	for _, bash := range []string{"bash", "Bash"} {
		if slices.Contains(names, bash) {
			fmt.Fprintf(&b, " %s runs each command in a fresh shell whose working directory and exported variables persist across calls (a cd or export in one call holds for the next); use run_in_background for servers and long jobs.", bash)
		}
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
	if (scope.Confined() || len(scope.DenyRules()) > 0) && (slices.Contains(names, "bash") || slices.Contains(names, "Bash")) {
		b.WriteString(" These path rules do not confine the shell.")
	}
	return b.String()
}
