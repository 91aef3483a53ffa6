package server

import (
	"bytes"
	"encoding/json"
	"io"
)

// maxStdioLine bounds one message from a STDIO client; a longer line is refused and
// skipped.
const maxStdioLine = 64 << 20

// JSON-RPC error codes for lines that are not messages.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lineFilter hands the client's messages to the SDK a line at a time, and answers itself
// the lines that are not JSON-RPC messages: the SDK's STDIO connection ends the session
// at the first such line, so one stray line from a client would take the server down
// (https://github.com/modelcontextprotocol/go-sdk/issues/1209).
type lineFilter struct {
	r      io.Reader
	accept func(requests int)                             // a line went through
	seen   func(line []byte)                              // and what it was, if set
	reject func(id json.RawMessage, code int, msg string) // a line was answered with an error

	chunk    []byte // what one read fills
	buf      []byte // read, not yet split into lines
	scanned  int    // how much of buf is known to hold no newline
	out      []byte // lines checked and not yet read by the SDK
	err      error  // from r, reported once buf and out are used up
	skipping bool   // dropping the rest of a line over maxStdioLine
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.fill()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// fill reads what the client sent and checks the lines it completes.
func (f *lineFilter) fill() {
	if f.chunk == nil {
		f.chunk = make([]byte, 64<<10)
	}
	n, err := f.r.Read(f.chunk)
	f.buf = append(f.buf, f.chunk[:n]...)
	for {
		// Only what was just read is searched: a large message arrives in many reads.
		i := bytes.IndexByte(f.buf[f.scanned:], '\n')
		if i < 0 {
			f.scanned = len(f.buf)
			break
		}
		i += f.scanned
		f.scanned = 0
		if f.skipping {
			f.skipping = false
		} else {
			f.check(f.buf[:i])
		}
		f.buf = f.buf[i+1:]
	}
	if !f.skipping && completeValue(f.buf) {
		// A client that does not end its message with a newline, but waits for the
		// answer, still gets one.
		f.check(f.buf)
		f.buf, f.scanned = f.buf[:0], 0
	}
	if len(f.buf) > maxStdioLine && !f.skipping {
		f.reject(nil, codeInvalidRequest, "message too large: a line may hold at most 64 MiB")
		f.skipping = true
	}
	if f.skipping {
		f.buf, f.scanned = f.buf[:0], 0
	}
	if err != nil {
		if len(f.buf) > 0 && !f.skipping {
			f.check(f.buf) // a last line without its newline
		}
		f.buf, f.scanned, f.err = nil, 0, err
	}
	if len(f.buf) == 0 {
		f.buf = nil // let a large line's buffer go
	}
}

// completeValue reports whether b, which has no newline, already holds a whole JSON
// object or array. Only small ones are checked, so that a large message arriving in
// pieces is not scanned again for each piece.
func completeValue(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 1<<20 {
		return false
	}
	last := b[len(b)-1]
	return (last == '}' || last == ']') && json.Valid(b)
}

// check passes line on to the SDK, or answers it with an error.
func (f *lineFilter) check(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	requests, e := inspect(line)
	if e != nil {
		f.reject(e.id, e.code, e.msg)
		return
	}
	f.out = append(f.out, line...)
	f.out = append(f.out, '\n')
	f.accept(requests)
	if f.seen != nil {
		f.seen(line)
	}
}

// lineError says why a line is not a JSON-RPC message, as a JSON-RPC error would.
type lineError struct {
	code int
	msg  string
	id   json.RawMessage // the id to answer to, if the line had a usable one
}

// inspect checks that line holds one JSON-RPC message in the form the SDK takes, and counts
// the requests (a method and an id) in it: 0 or 1. A batch (a JSON array) is refused: the
// SDK's STDIO connection ends at one, and MCP has no batches since protocol 2025-06-18.
func inspect(line []byte) (requests int, _ *lineError) {
	if !json.Valid(line) {
		return 0, &lineError{code: codeParseError, msg: "parse error: the line is not one valid JSON value (send one JSON-RPC message per line)"}
	}
	if line[0] == '[' {
		return 0, &lineError{code: codeInvalidRequest, msg: "invalid request: JSON-RPC batches (arrays) are not supported; send each message as its own line"}
	}
	f, ok := topFields(line)
	var id json.RawMessage
	if isID(f.id) {
		id = f.id
	}
	switch {
	case !ok:
		return 0, &lineError{code: codeInvalidRequest, msg: "invalid request: a JSON-RPC message is a JSON object"}
	case jsonString(f.jsonrpc) != "2.0":
		return 0, &lineError{code: codeInvalidRequest, msg: `invalid request: "jsonrpc" must be "2.0"`, id: id}
	case f.id != nil && !isID(f.id):
		return 0, &lineError{code: codeInvalidRequest, msg: "invalid request: an id is a string, a number or null"}
	case f.method != nil && f.method[0] != '"':
		return 0, &lineError{code: codeInvalidRequest, msg: `invalid request: "method" must be a string`, id: id}
	case f.method == nil && !f.answerable():
		return 0, &lineError{code: codeInvalidRequest, msg: "invalid request: a message needs a method, or an id to answer"}
	case f.request():
		return 1, nil
	}
	return 0, nil
}

// classify counts the requests and the replies in a line of valid JSON: a message, or a
// batch of them. It reads only the members that decide that.
func classify(line []byte) (requests, replies int) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return 0, 0
	}
	for _, m := range splitBatch(line) {
		switch f, _ := topFields(m); {
		case f.request():
			requests++
		case f.reply():
			replies++
		}
	}
	return requests, replies
}

// splitBatch returns the messages in line (valid JSON, not empty): the line itself, or
// the members of a batch.
func splitBatch(line []byte) [][]byte {
	if line[0] != '[' {
		return [][]byte{line}
	}
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) != nil {
		return nil
	}
	msgs := make([][]byte, len(batch))
	for i, m := range batch {
		msgs[i] = m
	}
	return msgs
}

// fields are the raw values of a message's top-level members that decide its kind; nil
// when absent.
type fields struct {
	jsonrpc, id, method json.RawMessage
}

// request reports whether the message is a request: a method and an id that is not null.
func (f fields) request() bool { return f.method != nil && f.answerable() }

// reply reports whether the message answers a request: an id, and no method.
func (f fields) reply() bool { return f.method == nil && f.answerable() }

func (f fields) answerable() bool { return f.id != nil && string(f.id) != "null" }

// topFields finds the members of the JSON object m (valid JSON) by their exact names, as
// the SDK does; ok is false if m is not an object.
func topFields(m []byte) (f fields, ok bool) {
	i := skipSpace(m, 0)
	if i >= len(m) || m[i] != '{' {
		return f, false
	}
	i++
	for {
		i = skipSpace(m, i)
		if i >= len(m) || m[i] != '"' {
			return f, true // the closing brace
		}
		end := stringEnd(m, i)
		key := jsonKey(m[i:end])
		i = skipSpace(m, end) + 1 // past the colon
		i = skipSpace(m, i)
		vend := valueEnd(m, i)
		switch key {
		case "jsonrpc":
			f.jsonrpc = m[i:vend]
		case "id":
			f.id = m[i:vend]
		case "method":
			f.method = m[i:vend]
		}
		i = skipSpace(m, vend)
		if i < len(m) && m[i] == ',' {
			i++
		}
	}
}

// valueEnd returns the index just past the JSON value (valid JSON) starting at m[i].
func valueEnd(m []byte, i int) int {
	switch m[i] {
	case '"':
		return stringEnd(m, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(m); {
			switch m[j] {
			case '"':
				j = stringEnd(m, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(m)
	}
	j := i
	for j < len(m) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(m[j])) {
		j++
	}
	return j
}

// isID reports whether v is a JSON-RPC id: a string, a number, or null.
func isID(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	c := v[0]
	return c == '"' || c == '-' || c >= '0' && c <= '9' || string(v) == "null"
}

// jsonString returns the text of a JSON string, or "" if v is not one.
func jsonString(v json.RawMessage) string {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// stringEnd returns the index just past the JSON string starting at line[i].
func stringEnd(line []byte, i int) int {
	for j := i + 1; j < len(line); {
		k := bytes.IndexAny(line[j:], `"\`)
		if k < 0 {
			return len(line)
		}
		j += k
		if line[j] == '"' {
			return j + 1
		}
		j += 2 // an escape
	}
	return len(line)
}

// jsonKey returns the text of a quoted JSON string, unescaping it only when it has escapes.
func jsonKey(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
