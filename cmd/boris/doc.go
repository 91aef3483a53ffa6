// Command boris is an MCP server that gives AI agents a shell, file viewing and editing,
// and search, over STDIO or streamable HTTP.
package main
