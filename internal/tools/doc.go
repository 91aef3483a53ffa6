// Package tools is Boris's MCP face: the tool table, argument structs, descriptions,
// handlers and the text the model reads. Handlers check their arguments, call one domain
// function (a session's Run, files.Replace, search.Grep) and word its result and errors,
// in the tool names of the face offered (see face.go); errors.go maps errors to codes.
//
// A face is one set of tool names and parameters over the same handlers, chosen at start:
// boris (bash, view, str_replace, create_file, grep, find and the task tools), editor
// (--anthropic-compat: str_replace_editor in place of the three file tools), and
// claude-code (--tools claude-code: Claude Code's Bash, Read, Edit and the rest, whose Go
// names start with CC or cc). Each row of the tool table (table.go) names its tool, the
// faces that offer it, and how its calls read in the live view and the audit log.
package tools

// The input schemas first: the goldens and call scripts are made by a build that uses them.
//go:generate go test -run ^TestGeneratedSchemas$ -update .
//go:generate go test -run ^(TestToolsListGolden|TestReadmeToolsSection|TestCalls)$ -update .
