package tools

import "context"

// outcomeKey holds, in a tool call's context, where a handler records how the call ended
// when that is more than its result says: a command that timed out or was stopped still
// returns an ordinary result.
type outcomeKey struct{}

// WithOutcome returns a context for one tool call and the place its handler records the
// call's outcome ("exit 3", "killed by SIGSEGV (exit 139)", "timed_out", "cancelled",
// "session_closed"); it stays empty for a call that ran to its end with status 0.
func WithOutcome(ctx context.Context) (context.Context, *string) {
	o := new(string)
	return context.WithValue(ctx, outcomeKey{}, o), o
}

// setOutcome records how the call in ctx ended, if the caller asked to know.
func setOutcome(ctx context.Context, outcome string) {
	if o, ok := ctx.Value(outcomeKey{}).(*string); ok {
		*o = outcome
	}
}
