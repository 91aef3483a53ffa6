package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/checkpoint"
	"github.com/mjkoo/boris/internal/watch"
)

// readOnlyTools are the tools that never change files: their calls leave no checkpoint
// and cost no look at the workspace. The checkpoint tools record their own.
var readOnlyTools = []string{"view", "grep", "find", "Read", "Glob", "Grep", "view_image", "task_list",
	"checkpoint_list", "checkpoint_diff", "rewind", "checkpoint"}

// checkpointed wraps a tool's handler so that what the call changed in the workspace,
// whichever way it changed it, is recorded as a checkpoint, and its result ends with a
// line naming it. What changed between calls (a background task, an editor) is recorded
// first, as a checkpoint of its own.
func checkpointed[In, Out any](hs *handlers, name string, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	if hs.Checkpoints == nil || contains(readOnlyTools, name) {
		return h
	}
	cps := hs.Checkpoints
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if err := captureBetween(ctx, cps); err != nil {
			hs.Logger.Warn("checkpoints: capturing changes made between calls", "err", err)
		}
		res, out, err := h(ctx, req, in)
		// The call's changes are recorded even if the client has given up on it.
		c, cerr := cps.Capture(context.WithoutCancel(ctx), hs.callInfo(req, name))
		if cerr != nil {
			hs.Logger.Warn("checkpoints: capturing a call's changes", "tool", name, "err", cerr)
		}
		if c != nil {
			watch.CallFrom(ctx).SetCheckpoint(c.ID, len(c.Changes))
		}
		if c != nil && err == nil {
			if res == nil {
				res = &mcp.CallToolResult{}
			}
			appendLine(res, checkpointLine(c))
		}
		return res, out, err
	}
}

// captureBetween records what changed since the last capture, outside any call (a
// background task, an editor), as a checkpoint of its own, which the live view shows.
func captureBetween(ctx context.Context, cps *checkpoint.Tracker) error {
	c, err := cps.Capture(ctx, checkpoint.CallInfo{Call: "changes made between calls"})
	if c != nil {
		watch.CallFrom(ctx).BetweenCalls(c.ID, len(c.Changes))
	}
	return err
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// callInfo says which call a checkpoint is for: the tool, the call in one line, the
// session, and the client's turn where its _meta names one (Codex's does).
func (h *handlers) callInfo(req *mcp.CallToolRequest, name string) checkpoint.CallInfo {
	info := checkpoint.CallInfo{Tool: name}
	if req == nil || req.Params == nil {
		return info
	}
	info.Call = summarize(name, req.Params.Arguments)
	info.Turn = turnOf(req.Params.Meta)
	if req.Session != nil {
		info.Session = req.Session.ID()
	}
	return info
}

// summarize is a call in one line, as the live view shows it. It is set at init, since
// the handlers it describes are built from the table it reads.
var summarize func(tool string, args json.RawMessage) string

func init() {
	summarize = func(tool string, args json.RawMessage) string { return ViewCall(tool, args).Summary() }
}

// turnOf finds the client's turn id in a call's _meta: a string under a key that names a
// turn, or the id inside an object under such a key, as Codex sends it:
// {"x-codex-turn-metadata": {"turn_id": "…", "turn_trigger": "exec", …}}. Keys are tried in
// order, so that the same _meta always gives the same turn.
func turnOf(meta map[string]any) string {
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if !strings.Contains(strings.ToLower(k), "turn") {
			continue
		}
		switch v := meta[k].(type) {
		case string:
			return v
		case map[string]any:
			for _, id := range []string{"turn_id", "turnId", "id"} {
				if s, ok := v[id].(string); ok && s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// checkpointLine is the line that ends the result of a call that changed files.
func checkpointLine(c *checkpoint.Checkpoint) string {
	return fmt.Sprintf("checkpoint: %s (%s changed)", c.ID, plural(len(c.Changes), "file"))
}

// appendLine ends the result's text with line.
func appendLine(res *mcp.CallToolResult, line string) {
	for i := len(res.Content) - 1; i >= 0; i-- {
		if tc, ok := res.Content[i].(*mcp.TextContent); ok {
			// The result keeps its way of ending: with a newline or without.
			t := tc.Text
			switch {
			case t == "" || strings.HasSuffix(t, "\n"):
				t += line + "\n"
			default:
				t += "\n" + line
			}
			res.Content[i] = &mcp.TextContent{Text: t, Meta: tc.Meta, Annotations: tc.Annotations}
			return
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: line + "\n"})
}

// CheckpointListArgs are the arguments of checkpoint_list.
type CheckpointListArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"Most checkpoints to list, newest first (default 20)."`
}

// CheckpointDiffArgs are the arguments of checkpoint_diff.
type CheckpointDiffArgs struct {
	ID string `json:"id" jsonschema:"The checkpoint whose state to compare, such as cp-3: the state just before its call ran."`
	To string `json:"to,omitempty" jsonschema:"The checkpoint to compare it with; the workspace as it is now when not given."`
}

// RewindArgs are the arguments of rewind.
type RewindArgs struct {
	To     string   `json:"to" jsonschema:"The checkpoint to go back to, such as cp-3: the workspace is put back as it was just before that call ran. turn:ID names the first checkpoint of a client's turn."`
	Paths  []string `json:"paths,omitempty" jsonschema:"Rewind only these files or directories (absolute, or relative to the workspace root); all changed paths when not given."`
	DryRun *bool    `json:"dry_run,omitempty" jsonschema:"Only say what would change (the default); false to change the files."`
	Force  bool     `json:"force,omitempty" jsonschema:"Rewind files changed outside Boris's calls since the checkpoint too, instead of refusing."`
}

// CheckpointArgs are the arguments of checkpoint.
type CheckpointArgs struct {
	Label string `json:"label" jsonschema:"A name for this moment, shown by checkpoint_list."`
}

const checkpointListDescription = "List the checkpoints of the workspace, newest first.\n\n" +
	"Every call that changed files (a file edit, or a command and what it did: files written, removed, renamed, chmod...) left one. " +
	"A checkpoint's id names the state just before its call ran; rewind goes back to it. " +
	"Each line says the call, what it added, changed and removed, and whether it can be put back."

const checkpointDiffDescription = "Show what differs between the state a checkpoint names and now (or another checkpoint): each changed path, with a diff for text files."

const rewindDescription = "Put the workspace back as it was just before a checkpoint's call ran, undoing what that call and every later one changed, whether made by file tools or by commands.\n\n" +
	"By default this is a dry run that lists exactly what would change; call again with dry_run false to do it. " +
	"A rewind is itself a checkpoint, so it can be undone by rewinding to the checkpoint its result names. " +
	"Files changed outside Boris's calls since are refused, by name, unless force is true. Never touches .git."

const checkpointDescription = "Mark the current state of the workspace with a label, as a checkpoint to rewind to later."

func addCheckpointList(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "checkpoint_list", Title: "List checkpoints", Description: checkpointListDescription,
		InputSchema: schemaOf[CheckpointListArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "List checkpoints", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.checkpointList)
}

func addCheckpointDiff(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "checkpoint_diff", Title: "Compare with a checkpoint", Description: checkpointDiffDescription,
		InputSchema: schemaOf[CheckpointDiffArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Compare with a checkpoint", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.checkpointDiff)
}

func addRewind(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "rewind", Title: "Rewind to a checkpoint", Description: rewindDescription,
		InputSchema: schemaOf[RewindArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Rewind to a checkpoint", DestructiveHint: new(true), OpenWorldHint: new(false)},
	}, h.rewind)
}

func addCheckpoint(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name: "checkpoint", Title: "Mark a checkpoint", Description: checkpointDescription,
		InputSchema: schemaOf[CheckpointArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Mark a checkpoint", IdempotentHint: false, OpenWorldHint: new(false)},
	}, h.checkpoint)
}

func (h *handlers) checkpointList(ctx context.Context, req *mcp.CallToolRequest, in CheckpointListArgs) (*mcp.CallToolResult, any, error) {
	cps, err := h.checkpoints()
	if err != nil {
		return nil, nil, err
	}
	if err := cps.Off(ctx); err != nil {
		return nil, nil, errorf(CodeUnsupported, "checkpoints are off: %v", err)
	}
	if err := captureBetween(ctx, cps); err != nil {
		return nil, nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	list := cps.List(limit)
	if len(list) == 0 {
		return text("No checkpoints yet: no call has changed a file in " + cps.Root() + ".\n"), nil, nil
	}
	var b strings.Builder
	for _, c := range list {
		b.WriteString(listLine(c))
	}
	if all := len(cps.List(0)); all > len(list) {
		fmt.Fprintf(&b, "[%d older checkpoints not shown; set limit to see them]\n", all-len(list))
	}
	fmt.Fprintf(&b, "rewind {\"to\": \"%s\"} shows what going back to before that call would change.\n", list[len(list)-1].ID)
	return text(b.String()), nil, nil
}

// listLine is one checkpoint in checkpoint_list.
func listLine(c *checkpoint.Checkpoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s ", c.ID, c.Time.Format("15:04:05"))
	switch {
	case c.Label != "":
		fmt.Fprintf(&b, "checkpoint %q", c.Label)
	case c.Tool == "":
		b.WriteString("(between calls)")
	default:
		b.WriteString(c.Tool)
		if c.Call != "" {
			fmt.Fprintf(&b, " %s", oneLine(c.Call))
		}
	}
	if c.Turn != "" {
		fmt.Fprintf(&b, " [turn %s]", c.Turn)
	}
	if len(c.Changes) > 0 {
		a, ch, r := c.Counts()
		fmt.Fprintf(&b, ": %d added, %d changed, %d removed", a, ch, r)
		if u := c.Unrestorable(); len(u) > 0 {
			var why []string
			for i, x := range u {
				if i == 3 {
					why = append(why, fmt.Sprintf("%d more", len(u)-i))
					break
				}
				why = append(why, x.Path+" ("+x.Before.Lost+")")
			}
			fmt.Fprintf(&b, "; not restorable: %s", strings.Join(why, ", "))
		} else {
			b.WriteString("; restorable")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// maxCheckpointDiff bounds the text checkpoint_diff shows of the files' contents.
const maxCheckpointDiff = 20000

func (h *handlers) checkpointDiff(ctx context.Context, req *mcp.CallToolRequest, in CheckpointDiffArgs) (*mcp.CallToolResult, any, error) {
	cps, err := h.checkpoints()
	if err != nil {
		return nil, nil, err
	}
	changes, err := cps.Diff(ctx, in.ID, in.To)
	if err != nil {
		return nil, nil, checkpointError(err)
	}
	to := in.To
	if to == "" {
		to = "now"
	}
	if len(changes) == 0 {
		return text(fmt.Sprintf("No difference between %s and %s.\n", in.ID, to)), nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Between %s and %s, %s changed:\n", in.ID, to, plural(len(changes), "path"))
	for _, ch := range changes {
		fmt.Fprintf(&b, "%s: %s\n", ch.Path, describe(ch.Before, ch.After))
	}
	for _, ch := range changes {
		d := textDiff(cps.Store(), ch)
		if d == "" {
			continue
		}
		if b.Len()+len(d) > maxCheckpointDiff {
			fmt.Fprintf(&b, "[diffs of further files left out: over %d characters]\n", maxCheckpointDiff)
			break
		}
		b.WriteString(d)
	}
	return text(b.String()), nil, nil
}

// describe says in words how a path went from a to z.
func describe(a, z checkpoint.State) string {
	switch {
	case a.Kind == checkpoint.Absent:
		return "added " + z.Kind.String()
	case z.Kind == checkpoint.Absent:
		return "removed " + a.Kind.String()
	case a.Kind != z.Kind:
		return a.Kind.String() + " replaced by " + z.Kind.String()
	case a.Kind == checkpoint.Symlink:
		return fmt.Sprintf("symlink to %s, was to %s", z.Link, a.Link)
	case a.Mode != z.Mode && a.Blob == z.Blob:
		return fmt.Sprintf("mode %04o -> %04o", uint32(a.Mode.Perm()), uint32(z.Mode.Perm()))
	case a.Mode != z.Mode:
		return fmt.Sprintf("modified, mode %04o -> %04o", uint32(a.Mode.Perm()), uint32(z.Mode.Perm()))
	}
	return "modified"
}

// textDiff renders a change to a text file as a unified diff; "" for anything else.
func textDiff(store *checkpoint.Store, ch checkpoint.Change) string {
	get := func(s checkpoint.State) (string, bool) {
		if s.Kind == checkpoint.Absent {
			return "", true
		}
		if s.Kind != checkpoint.File || s.Blob == "" {
			return "", false
		}
		data, err := store.Get(s.Blob)
		if err != nil || !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
			return "", false
		}
		return string(data), true
	}
	old, ok1 := get(ch.Before)
	cur, ok2 := get(ch.After)
	if !ok1 || !ok2 || old == cur {
		return ""
	}
	return watch.Diff(ch.Path, watch.Hunk{Old: old, New: cur})
}

func checkpointError(err error) error {
	if errors.Is(err, checkpoint.ErrNoCheckpoint) {
		return errorf(CodeNotFound, "%v; checkpoint_list shows the checkpoints", err)
	}
	return err
}

func (h *handlers) rewind(ctx context.Context, req *mcp.CallToolRequest, in RewindArgs) (*mcp.CallToolResult, any, error) {
	cps, err := h.checkpoints()
	if err != nil {
		return nil, nil, err
	}
	to, err := h.resolveTo(in.To)
	if err != nil {
		return nil, nil, err
	}
	var paths []string
	for _, p := range in.Paths {
		rel, err := cps.Rel(p)
		if err != nil {
			return nil, nil, errorf(CodeAccessDenied, "%v", err)
		}
		paths = append(paths, rel)
	}
	dry := in.DryRun == nil || *in.DryRun
	plan, err := rewindTo(ctx, cps, to, paths, dry, in.Force, h.callInfo(req, "rewind"))
	if plan != nil && plan.Rescue != nil {
		watch.CallFrom(ctx).SetCheckpoint(plan.Rescue.ID, len(plan.Rescue.Changes))
	}
	var ce *checkpoint.ConflictError
	if errors.As(err, &ce) {
		return nil, nil, errorf(CodeStale, "%v; nothing was changed. Look at them (checkpoint_diff), then rewind again with force true to overwrite them, or with paths that leave them out", err)
	}
	if err != nil {
		return nil, nil, checkpointError(err)
	}
	return text(rewindText(plan, dry, in.Force)), nil, nil
}

// rewindTo is what a rewind does, from the rewind tool or the live view alike: the
// tracker records the rescue checkpoint for info, then puts the paths back.
func rewindTo(ctx context.Context, cps *checkpoint.Tracker, to string, paths []string, dry, force bool, info checkpoint.CallInfo) (*checkpoint.Plan, error) {
	info.Call = "rewind to " + to
	return cps.Rewind(ctx, to, paths, dry, force, info)
}

// ViewRewinder returns how the live view rewinds the workspace for the person watching:
// as the rewind tool does, described as the tool describes it. Nil when the rewind tool
// is not offered (checkpoints off, or the tool disabled), so the view offers none either.
func ViewRewinder(d Deps) watch.Rewinder {
	if d.Checkpoints == nil || d.Config == nil || !slices.Contains(Enabled(d.Config), "rewind") {
		return nil
	}
	cps := d.Checkpoints
	return func(ctx context.Context, to string, dry, force bool) (*watch.Rewind, error) {
		plan, err := rewindTo(ctx, cps, to, nil, dry, force, checkpoint.CallInfo{Tool: "rewind", Session: "live view"})
		if err != nil {
			return nil, err
		}
		out := &watch.Rewind{To: plan.To, DryRun: dry, Actions: []watch.RewindAction{}, Failed: plan.Failed, Text: rewindText(plan, dry, force)}
		for _, a := range plan.Actions {
			out.Actions = append(out.Actions, watch.RewindAction{Path: a.Path, Do: restoreWord(a), Conflict: a.Conflict, Lost: a.Lost})
		}
		if plan.Rescue != nil {
			out.Rescue, out.RescueFiles = plan.Rescue.ID, len(plan.Rescue.Changes)
		}
		return out, nil
	}
}

// resolveTo turns "turn:ID" into the first checkpoint of that turn.
func (h *handlers) resolveTo(to string) (string, error) {
	turn, ok := strings.CutPrefix(to, "turn:")
	if !ok {
		return to, nil
	}
	list := h.Checkpoints.List(0) // rewind checked h.Checkpoints
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Turn == turn {
			return list[i].ID, nil
		}
	}
	return "", errorf(CodeNotFound, "no checkpoint belongs to turn %s; checkpoint_list shows each checkpoint's turn", turn)
}

// rewindText says what a rewind would do or did.
func rewindText(p *checkpoint.Plan, dry, force bool) string {
	var b strings.Builder
	if len(p.Actions) == 0 {
		fmt.Fprintf(&b, "Nothing to rewind: the workspace already is as it was before %s.\n", p.To)
		return b.String()
	}
	verb := "Would put back"
	if !dry {
		verb = "Put back"
	}
	fmt.Fprintf(&b, "%s %s as before %s:\n", verb, plural(len(p.Actions), "path"), p.To)
	for _, a := range p.Actions {
		fmt.Fprintf(&b, "%s %s", restoreWord(a), a.Path)
		switch {
		case a.Lost != "":
			fmt.Fprintf(&b, " (not restorable: %s)", a.Lost)
		case a.Conflict != "" && dry && !force:
			fmt.Fprintf(&b, " (refused without force: %s)", a.Conflict)
		case a.Conflict != "":
			fmt.Fprintf(&b, " (overwritten: %s)", a.Conflict)
		}
		b.WriteString("\n")
	}
	for _, f := range p.Failed {
		fmt.Fprintf(&b, "failed: %s\n", f)
	}
	if dry {
		fmt.Fprintf(&b, "This was a dry run: call rewind with {\"to\": \"%s\", \"dry_run\": false} to do it.\n", p.To)
		return b.String()
	}
	if p.Rescue != nil {
		fmt.Fprintf(&b, "To undo this rewind: rewind {\"to\": \"%s\", \"dry_run\": false}.\n", p.Rescue.ID)
		b.WriteString(checkpointLine(p.Rescue) + "\n")
	}
	return b.String()
}

// restoreWord says what putting a path back does to it.
func restoreWord(a checkpoint.Action) string {
	switch {
	case a.To.Kind == checkpoint.Absent:
		return "remove " + a.Now.Kind.String()
	case a.Now.Kind == checkpoint.Absent:
		return "recreate " + a.To.Kind.String()
	case a.Now.Kind != a.To.Kind:
		return "replace " + a.Now.Kind.String() + " by " + a.To.Kind.String()
	case a.To.Kind == checkpoint.Dir || a.To.Blob == a.Now.Blob && a.To.Kind == checkpoint.File:
		return "restore mode of"
	}
	return "restore"
}

func (h *handlers) checkpoint(ctx context.Context, req *mcp.CallToolRequest, in CheckpointArgs) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Label) == "" {
		return nil, nil, errorf(CodeInvalidArgument, "label is empty: give the checkpoint a name, such as \"before refactor\"")
	}
	cps, err := h.checkpoints()
	if err != nil {
		return nil, nil, err
	}
	if err := captureBetween(ctx, cps); err != nil {
		return nil, nil, err
	}
	info := h.callInfo(req, "checkpoint")
	info.Label = in.Label
	c, err := cps.Capture(ctx, info)
	if err != nil {
		return nil, nil, err
	}
	watch.CallFrom(ctx).SetCheckpoint(c.ID, len(c.Changes))
	return text(fmt.Sprintf("Checkpoint %s marks the workspace as it is now (%q). rewind {\"to\": \"%s\", \"dry_run\": false} comes back to it.\n", c.ID, in.Label, c.ID)), nil, nil
}

// checkpointDiffLine is a checkpoint_diff call in the live view: "cp-3 → now".
func checkpointDiffLine(a callArgs) string {
	to := a.str("to")
	if to == "" {
		to = "now"
	}
	return a.str("id") + " → " + to
}

// rewindLine is a rewind call in the live view: "to cp-3 (dry run)".
func rewindLine(a callArgs) string {
	s := "to " + a.str("to")
	if v, ok := a["dry_run"]; !ok || v != false {
		s += " (dry run)"
	}
	if a.flag("force") {
		s += " (force)"
	}
	return s
}

// checkpoints returns the workspace's checkpoints, or why there are none: a second Boris
// keeps those of the same workspace, or the state directory cannot be written (the log
// says which).
func (h *handlers) checkpoints() (*checkpoint.Tracker, error) {
	if h.Checkpoints == nil {
		return nil, errorf(CodeUnsupported, "checkpoints are off in this Boris: it could not open its store in %s (its log says why; another Boris may keep this workspace's checkpoints)", h.Config.StateDir)
	}
	return h.Checkpoints, nil
}
