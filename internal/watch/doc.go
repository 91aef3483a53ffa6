// Package watch is Boris's live view for the person beside the agent: one in-process
// stream of events (sessions, tool calls, streamed output, background tasks, edits),
// kept in a bounded ring and served over Server-Sent Events to an embedded web page and
// to `boris watch`.
//
// Publishing never blocks a tool call: subscribers read the shared ring at their own
// pace, and one that falls more than the ring's length behind loses the oldest events
// (it is told how many). With no subscriber, output and diffs are not even gathered.
//
// The page acts in two ways, both POSTs that need the token and a same-origin browser:
// it stops a running command or task, and it rewinds the workspace to a call's checkpoint
// through a [Rewinder] the server gives it, the rewind tool's own, a dry run first.
package watch
