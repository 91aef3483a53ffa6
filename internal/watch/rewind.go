package watch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/mjkoo/boris/internal/checkpoint"
)

// Rewinder puts the workspace back as it was just before checkpoint to, as the rewind
// tool does (the same checks, the same rescue checkpoint, the same crash safety), for the
// person watching. A dry run only says what it would do; force overwrites files changed
// outside Boris's calls instead of refusing them. Its errors wrap
// [checkpoint.ErrNoCheckpoint] for an unknown id and are a [*checkpoint.ConflictError]
// for a rewind refused without force.
type Rewinder func(ctx context.Context, to string, dryRun, force bool) (*Rewind, error)

// Rewind is what a rewind would do, or did, as the page shows it.
type Rewind struct {
	To      string         `json:"to"` // the checkpoint rewound to
	DryRun  bool           `json:"dry_run"`
	Actions []RewindAction `json:"actions"`
	Failed  []string       `json:"failed,omitempty"` // paths that could not be written, with why
	// Rescue is the checkpoint that records the rewind: rewinding to it undoes the rewind.
	Rescue      string `json:"rescue,omitempty"`
	RescueFiles int    `json:"rescue_files,omitempty"`
	// Text is the rewind tool's own result, as the agent would read it.
	Text string `json:"text"`
}

// RewindAction is what a rewind does to one path.
type RewindAction struct {
	Path string `json:"path"`
	Do   string `json:"do"` // in words: "restore", "remove file", "recreate directory"…
	// Conflict says why the path is refused unless forced: something other than Boris's
	// calls changed it.
	Conflict string `json:"conflict,omitempty"`
	Lost     string `json:"lost,omitempty"` // why the path cannot be put back
}

// rewindRequest is the body of POST /watch/rewind.
type rewindRequest struct {
	To     string `json:"to"`
	DryRun *bool  `json:"dry_run"` // true unless false, as for the rewind tool
	Force  bool   `json:"force"`
}

// rewind serves POST /watch/rewind: a dry run by default, the rewind itself with
// "dry_run": false, for a request that [web.mayChange] things. A rewind that is done (not
// a dry run) shows in the view as a call of its own, whose checkpoint is the rescue that
// undoes it.
func (w *web) rewind(rw http.ResponseWriter, r *http.Request) {
	if !w.mayChange(rw, r) {
		return
	}
	if w.opt.Rewind == nil {
		plain(rw, http.StatusNotFound, "this live view offers no rewind: checkpoints are off, or the rewind tool is disabled")
		return
	}
	var in rewindRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || strings.TrimSpace(in.To) == "" {
		plain(rw, http.StatusBadRequest, `send {"to": ID} with the checkpoint to go back to (such as cp-3), and "dry_run": false to do it rather than see what it would do`)
		return
	}
	dry := in.DryRun == nil || *in.DryRun
	if dry {
		res, err := w.opt.Rewind(r.Context(), in.To, true, in.Force)
		if err != nil {
			rewindError(rw, err)
			return
		}
		writeJSON(rw, res)
		return
	}

	// The rewind itself is a call of its own in the view, by the person watching.
	h := w.hub
	id := h.calls.Add(1)
	args := "to " + in.To + " (from the live view)"
	if in.Force {
		args += " (force)"
	}
	start := h.now()
	h.Publish(Event{Kind: KindCall, Time: start, Call: id, Tool: "rewind", Args: clip(args, maxArgs), Client: "live view"})
	// Once started, the rewind is not given up with the request: the tracker finishes it.
	res, err := w.opt.Rewind(context.WithoutCancel(r.Context()), in.To, false, in.Force)
	end := Event{Kind: KindCallEnd, Call: id, Tool: "rewind", Client: "live view", DurationMS: h.now().Sub(start).Milliseconds()}
	if err != nil {
		end.Error, end.Outcome, end.Summary = true, "refused", clip(firstLine(err.Error()), maxSummary)
		h.Publish(end)
		rewindError(rw, err)
		return
	}
	end.Outcome, end.Summary = "ok", clip(firstLine(res.Text), maxSummary)
	if len(res.Failed) > 0 {
		end.Error, end.Outcome = true, "partly failed"
	}
	end.Checkpoint, end.Files = res.Rescue, res.RescueFiles
	h.Publish(end)
	writeJSON(rw, res)
}

// rewindError tells the page why a rewind was refused.
func rewindError(rw http.ResponseWriter, err error) {
	var ce *checkpoint.ConflictError
	switch {
	case errors.As(err, &ce):
		plain(rw, http.StatusConflict, err.Error()+"; nothing was changed. Tick force to overwrite them, or leave them be")
	case errors.Is(err, checkpoint.ErrNoCheckpoint):
		plain(rw, http.StatusNotFound, err.Error()+": the live view shows each call's checkpoint, and checkpoint_list lists them all")
	case errors.Is(err, context.Canceled):
		plain(rw, http.StatusServiceUnavailable, "the request ended before the checkpoints were ready")
	default:
		plain(rw, http.StatusInternalServerError, "rewind failed: "+err.Error())
	}
}

func writeJSON(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(rw).Encode(v)
}
