// Package server runs Boris's MCP server over STDIO or streamable HTTP, giving every client
// session its own state and freeing that state, processes included, when the session ends.
package server
