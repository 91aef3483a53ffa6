package tools

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/checkpoint"
	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/search"
	"github.com/mjkoo/boris/internal/session"
)

// Deps is what handlers need from the server.
type Deps struct {
	Config *config.Config
	// Session returns the state of the client session a call arrived on.
	Session func(*mcp.ServerSession) (*session.Session, error)
	Logger  *slog.Logger
	// Confine is how commands are confined; nil means not at all.
	Confine *confine.Policy
	// Checkpoints records what calls change in the workspace; nil with checkpoints off.
	Checkpoints *checkpoint.Tracker
	// Indexes are grep's indexes of big trees; Register makes them unless
	// Config.NoSearchIndex.
	Indexes *search.Indexes
}

// handlers carries Deps to every tool handler.
type handlers struct {
	Deps
}

// session returns the calling client's state.
func (h *handlers) session(req *mcp.CallToolRequest) (*session.Session, error) {
	if req == nil || req.Session == nil {
		return nil, errors.New("no client session")
	}
	return h.Deps.Session(req.Session)
}

// group says when a tool is offered.
type group int

const (
	always     group = iota // file tools common to both modes, search
	shellTools              // bash and background tasks; off with --no-bash
	split                   // view, str_replace, create_file; off with --anthropic-compat
	compat                  // str_replace_editor; on with --anthropic-compat
	ccShell                 // Claude Code's Bash and background task tools; with --tools claude-code, off with --no-bash
	ccFiles                 // Claude Code's file and search tools; with --tools claude-code
	cxShell                 // Codex's exec_command and write_stdin; with --tools codex, off with --no-bash
	cxFiles                 // Codex's apply_patch and view_image; with --tools codex
	undo                    // checkpoint_list, checkpoint_diff, rewind, checkpoint: every face, unless checkpoints are off
)

// toolSet is the --tools value that offers the group's tools.
func (g group) toolSet() string {
	switch g {
	case ccShell, ccFiles:
		return toolsClaudeCode
	case cxShell, cxFiles:
		return toolsCodex
	}
	return toolsBoris
}

// entry is one row of the tool table.
type entry struct {
	name   string
	group  group
	add    func(*mcp.Server, *handlers)
	report report // how its calls read in the live view and the audit log
}

// Enabled returns the names of the tools cfg offers, in table order.
func Enabled(cfg *config.Config) []string {
	var names []string
	for _, e := range table {
		if e.enabled(cfg) {
			names = append(names, e.name)
		}
	}
	return names
}

func (e entry) enabled(cfg *config.Config) bool {
	if slices.Contains(cfg.DisableTools, e.name) {
		return false
	}
	if e.group == undo {
		return cfg.Checkpoints && cfg.StateDir != ""
	}
	if set := cmp.Or(cfg.Tools, toolsBoris); e.group.toolSet() != set {
		return false
	}
	switch e.group {
	case ccShell, cxShell:
		return !cfg.NoBash
	case shellTools:
		return !cfg.NoBash
	case split:
		return !cfg.AnthropicCompat
	case compat:
		return cfg.AnthropicCompat
	}
	return true
}

// Check reports an unknown name in cfg.DisableTools.
func Check(cfg *config.Config) error {
	var known []string
	for _, e := range table {
		known = append(known, e.name)
	}
	for _, n := range cfg.DisableTools {
		if !slices.Contains(known, n) {
			return fmt.Errorf("--disable-tools: unknown tool %q (tools: %s)", n, strings.Join(known, ", "))
		}
	}
	return nil
}

// Register adds every tool cfg offers to s.
func Register(s *mcp.Server, d Deps) {
	if d.Indexes == nil && !d.Config.NoSearchIndex {
		d.Indexes = &search.Indexes{Dir: d.Config.CacheDir}
	}
	h := &handlers{Deps: d}
	for _, e := range table {
		if e.enabled(d.Config) {
			e.add(s, h)
		}
	}
}
