// Package clients knows the MCP clients Boris talks to: how much of one result each
// passes to its model whole (characters and lines), whether its timer for a call can be
// extended, and how it shows results. It is one table of profiles ([Profiles]), looked up
// by the name a client gives itself ([Lookup]), and the budget a result is fitted to for
// a profile ([Profile.Budget]). It knows nothing of MCP itself.
package clients
