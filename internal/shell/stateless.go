package shell

import "strings"

// Stateless reports whether script, run by a shell started with env, certainly leaves the
// shell's working directory and exported variables as they were, so that there is nothing
// to report and the shell can run it exactly as `shell -c script` with nothing added.
// That saves the report's cost on every such call, and lets the shell exec a lone command
// in place of forking it.
//
// The test is deliberately narrow; anything it does not understand is not stateless.
// The shell's state changes only through a builtin, a keyword, an assignment or an
// expansion that assigns, run in the shell process itself. So a stateless script is a
// list of plain commands:
//   - only words, quotes, globs, redirections, pipes and the list operators
//     (; & && || newline): no subshells, groups, substitutions, parameter or arithmetic
//     expansions, escapes, comments or here-documents;
//   - every command's name is a plain word that names no builtin or keyword, except the
//     few that change nothing (true, false, echo, pwd, test, type), and assigns nothing;
//   - no double-quoted text holds $, ` or \;
//   - the environment carries no startup file, shell options or functions that could
//     run code before the script (BASH_ENV, ENV, SHELLOPTS, BASHOPTS, BASH_FUNC_*).
//
// A syntax error part way through changes nothing either: the commands run before it
// are plain ones.
func Stateless(script string, env []string) bool {
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "BASH_ENV", k == "ENV", k == "SHELLOPTS", k == "BASHOPTS", strings.HasPrefix(k, "BASH_FUNC_"):
			return false
		}
	}
	s := strings.Trim(script, " \t\n")
	if s == "" || strings.Contains(s, "<<") {
		return false
	}
	commandStart := true // the next word names a command
	last := ""           // the last operator
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isBlank(c), c == '\n' && commandStart: // blank lines, a line break after && or |
			i++
		case isOperator(s[i:]):
			op := s[i : i+1]
			if strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||") {
				op = s[i : i+2]
			}
			if commandStart {
				return false // an empty command: a leading or doubled operator
			}
			commandStart, last = true, op
			i += len(op)
		case commandStart:
			end := i
			for end < len(s) && isCommandNameByte(s[end]) {
				end++
			}
			if end == i || end < len(s) && !isBlank(s[end]) && !isOperator(s[end:]) {
				return false // quoted, expanded, assigned or redirected: not plain
			}
			if name := s[i:end]; isShellWord(name) && !isHarmlessBuiltin(name) {
				return false
			}
			commandStart = false
			i = end
		default:
			n := argumentLength(s[i:])
			if n == 0 {
				return false
			}
			i += n
		}
	}
	// A script may end with ; or &, but not with |, && or ||, which continue it.
	return !commandStart || last == ";" || last == "&"
}

// isOperator reports whether s starts with a pipe or list operator: | || & && ; or a
// newline. & followed by > starts a redirection (&>file), not an operator.
func isOperator(s string) bool {
	switch s[0] {
	case '|', ';', '\n':
		return true
	case '&':
		return len(s) == 1 || s[1] != '>'
	}
	return false
}

// argumentLength returns the length of the argument word (or redirection) at the start of
// s, or 0 if it holds anything Stateless does not accept.
func argumentLength(s string) int {
	i := 0
	for i < len(s) && !isBlank(s[i]) {
		c := s[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return 0
			}
			i += end + 2
		case c == '"':
			end := strings.IndexAny(s[i+1:], "\"$`\\")
			if end < 0 || s[i+1+end] != '"' {
				return 0
			}
			i += end + 2
		case c == '&' && i > 0 && s[i-1] == '>':
			i++ // 2>&1, >&2
		case c == '|' && i > 0 && s[i-1] == '>':
			return 0 // >| clobber: keep it simple
		case isOperator(s[i:]):
			return i
		case c >= 0x80 || isCommandNameByte(c) || strings.IndexByte("=,:@%^~<>*?[]&", c) >= 0:
			i++ // & here is &> (isOperator took the rest)
		default:
			return 0
		}
	}
	return i
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isCommandNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_./+-", c) >= 0
}

// isShellWord reports whether name is a builtin or a keyword of bash or of POSIX shells
// such as dash. A switch rather than a map, which would be built at every start.
func isShellWord(name string) bool {
	switch name {
	case // bash builtins (compgen -b)
		".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command",
		"compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo",
		"enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash",
		"help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd",
		"printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift",
		"shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset",
		"ulimit", "umask", "unalias", "unset", "wait",
		// bash keywords (compgen -k)
		"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
		"do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
		// other shells
		"chdir", "login", "newgrp":
		return true
	}
	return false
}

// isHarmlessBuiltin reports whether name is a builtin that changes neither the working
// directory nor a variable.
func isHarmlessBuiltin(name string) bool {
	switch name {
	case "true", "false", "echo", "pwd", "test", "type":
		return true
	}
	return false
}
