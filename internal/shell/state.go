package shell

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The shell reports where it ended and what it exported on a pipe the command's output
// cannot reach: `pwd`, a NUL, `export -p`, a NUL. parseState reads it.

// parseState splits a state report into the working directory and the exported
// variables, as KEY=value pairs.
func parseState(b []byte) (cwd string, env []string, err error) {
	dir, rest, ok := bytes.Cut(b, []byte{0})
	exports, _, ok2 := bytes.Cut(rest, []byte{0})
	if !ok || !ok2 {
		return "", nil, errors.New("state report is incomplete")
	}
	cwd = strings.TrimSuffix(string(dir), "\n")
	if !strings.HasPrefix(cwd, "/") {
		cwd = "" // pwd failed, e.g. the directory was removed
	}
	env, err = parseExports(string(exports))
	return cwd, env, err
}

// parseExports reads the output of `export -p` from bash (declare -x NAME="value", with
// $'...' for control characters) or a POSIX shell (export NAME='value'). Variables
// exported without a value and arrays, which are not passed to commands, are skipped.
func parseExports(s string) ([]string, error) {
	p := exportParser{s: s}
	var env []string
	for {
		p.skipSpace(true)
		if p.i >= len(p.s) {
			return env, nil
		}
		kv, ok, err := p.entry()
		if err != nil {
			return env, err
		}
		if ok {
			env = append(env, kv)
		}
	}
}

type exportParser struct {
	s string
	i int
}

func (p *exportParser) errorf(format string, args ...any) error {
	return fmt.Errorf("export -p output at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *exportParser) skipSpace(newlines bool) {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || newlines && p.s[p.i] == '\n') {
		p.i++
	}
}

// entry reads one "declare -x NAME=WORD" or "export NAME=WORD" line.
func (p *exportParser) entry() (kv string, ok bool, err error) {
	word := p.bare()
	array := false
	switch word {
	case "declare", "typeset":
		p.skipSpace(false)
		for p.i < len(p.s) && p.s[p.i] == '-' {
			flags := p.bare()
			array = array || strings.ContainsAny(flags, "aA")
			p.skipSpace(false)
		}
	case "export":
		p.skipSpace(false)
	default:
		return "", false, p.errorf("unexpected %q", word)
	}
	start := p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i], p.i == start) {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return "", false, p.errorf("missing variable name")
	}
	if p.i >= len(p.s) || p.s[p.i] != '=' {
		p.endLine()
		return "", false, nil // exported but unset
	}
	p.i++
	value, isArray, err := p.word()
	if err != nil {
		return "", false, err
	}
	p.endLine()
	if array || isArray {
		return "", false, nil
	}
	return name + "=" + value, true, nil
}

func (p *exportParser) endLine() {
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		p.i++
	}
}

// bare reads an unquoted run of non-space characters.
func (p *exportParser) bare() string {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(" \t\n", rune(p.s[p.i])) {
		p.i++
	}
	return p.s[start:p.i]
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// word reads a shell word made of quoted and unquoted parts, up to unquoted white space.
// A word in parentheses is an array value.
func (p *exportParser) word() (string, bool, error) {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		return "", true, p.skipArray()
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			return b.String(), false, nil
		case c == '\'':
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				return "", false, p.errorf("unterminated single quote")
			}
			b.WriteString(p.s[p.i+1 : p.i+1+end])
			p.i += end + 2
		case c == '"':
			if err := p.doubleQuoted(&b); err != nil {
				return "", false, err
			}
		case c == '$' && p.i+1 < len(p.s) && p.s[p.i+1] == '\'':
			p.i += 2
			if err := p.ansiC(&b); err != nil {
				return "", false, err
			}
		case c == '\\' && p.i+1 < len(p.s):
			p.backslash(&b)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String(), false, nil
}

func (p *exportParser) doubleQuoted(b *strings.Builder) error {
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return nil
		case c == '\\' && p.i+1 < len(p.s) && strings.IndexByte("$`\"\\\n", p.s[p.i+1]) >= 0:
			p.backslash(b)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return p.errorf("unterminated double quote")
}

// backslash reads a backslash and the character after it, which it writes unless it is
// a newline (a line continuation).
func (p *exportParser) backslash(b *strings.Builder) {
	if p.s[p.i+1] != '\n' {
		b.WriteByte(p.s[p.i+1])
	}
	p.i += 2
}

// ansiC reads the body of a $'...' string, after the opening quote.
func (p *exportParser) ansiC(b *strings.Builder) error {
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\'':
			p.i++
			return nil
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			p.escape(b, e)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return p.errorf("unterminated $' quote")
}

// ansiEscapes are the one-letter escapes of $'...' strings, and the bytes they stand for.
var ansiEscapes = [256]byte{'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r',
	't': '\t', 'v': '\v', '\\': '\\', '\'': '\'', '"': '"', '?': '?'}

// escape writes what the escape \e of a $'...' string stands for, reading the characters
// or digits that follow it; an escape bash does not know stays as it is.
func (p *exportParser) escape(b *strings.Builder, e byte) {
	if c := ansiEscapes[e]; c != 0 {
		b.WriteByte(c)
		return
	}
	switch e {
	case 'c':
		if p.i < len(p.s) {
			b.WriteByte(p.s[p.i] & 0x1f)
			p.i++
		}
	case '0', '1', '2', '3', '4', '5', '6', '7':
		p.i--
		b.WriteByte(byte(p.number(8, 3)))
	case 'x':
		if n, ok := p.digits(16, 2); ok {
			b.WriteByte(byte(n))
		} else {
			b.WriteString(`\x`)
		}
	case 'u', 'U':
		width := 4
		if e == 'U' {
			width = 8
		}
		if n, ok := p.digits(16, width); ok && n <= utf8.MaxRune {
			b.WriteRune(rune(n))
		} else if !ok {
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	default:
		b.WriteByte('\\')
		b.WriteByte(e)
	}
}

func (p *exportParser) number(base, width int) uint64 {
	n, _ := p.digits(base, width)
	return n
}

// digits reads up to width digits in base; ok is false if there were none.
func (p *exportParser) digits(base, width int) (uint64, bool) {
	start := p.i
	for p.i < len(p.s) && p.i-start < width && isDigit(p.s[p.i], base) {
		p.i++
	}
	if p.i == start {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[start:p.i], base, 64)
	return n, err == nil
}

func isDigit(c byte, base int) bool {
	switch base {
	case 8:
		return c >= '0' && c <= '7'
	default:
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
}

// skipArray passes over a parenthesised array value, minding quotes.
func (p *exportParser) skipArray() error {
	depth := 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '(':
			depth++
			p.i++
		case ')':
			depth--
			p.i++
			if depth == 0 {
				return nil
			}
		case '"':
			var b strings.Builder
			if err := p.doubleQuoted(&b); err != nil {
				return err
			}
		case '\'':
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				return p.errorf("unterminated single quote")
			}
			p.i += end + 2
		case '\\':
			p.i += 2
		default:
			p.i++
		}
	}
	return p.errorf("unterminated array")
}

// sessionEnv is the environment to keep after a command exported exported: the shell's
// own bookkeeping variables are dropped, and entries of prev that a shell cannot hold as
// variables (exported functions, names with odd characters) are carried over unchanged.
func sessionEnv(prev, exported []string) []string {
	out := make([]string, 0, len(exported)+4)
	for _, kv := range exported {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PWD", "SHLVL", "_", markVar:
			continue
		}
		out = append(out, kv)
	}
	for _, kv := range prev {
		k, _, _ := strings.Cut(kv, "=")
		if k == "SHLVL" || !isName(k) {
			out = append(out, kv)
		}
	}
	return out
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

// Linux refuses to start a program with an environment string over 128 KiB, or with
// arguments and environment together over a quarter of the stack limit (2 MiB by
// default). A variable that large, once kept, would make every later command fail.
const (
	maxEnvEntry = 128<<10 - 1 // bytes in KEY=value
	maxEnvTotal = 1 << 20     // bytes in all of KEY=value, leaving room for the script
)

// fitEnv returns env without the changes a program could not be started with: an entry
// over maxEnvEntry, then, while the total is over maxEnvTotal, the largest changed
// entries. A variable whose change is left out keeps its value from prev, or stays unset.
// It also returns the names of those variables.
func fitEnv(prev, env []string) ([]string, []string) {
	before := make(map[string]string, len(prev))
	for _, kv := range prev {
		k, _, _ := strings.Cut(kv, "=")
		before[k] = kv
	}
	out := slices.Clone(env)
	var dropped []string
	total := 0
	leaveOut := func(i int) {
		k, _, _ := strings.Cut(out[i], "=")
		dropped = append(dropped, k)
		total += len(before[k]) - len(out[i])
		out[i] = before[k] // "" when it was not set: removed below
	}
	var changed []int
	for i, kv := range out {
		total += len(kv) + 1
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case len(kv) > maxEnvEntry:
			leaveOut(i)
		case before[k] != kv:
			changed = append(changed, i)
		}
	}
	slices.SortFunc(changed, func(a, b int) int { return len(out[b]) - len(out[a]) })
	for _, i := range changed {
		if total <= maxEnvTotal {
			break
		}
		leaveOut(i)
	}
	return slices.DeleteFunc(out, func(kv string) bool { return kv == "" }), dropped
}
