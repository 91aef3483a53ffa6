package server

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"
)

// FuzzLineFilter checks the STDIO line filter against encoding/json: each line the client
// sends is passed to the SDK exactly when encoding/json reads it as a JSON-RPC message
// the SDK takes (an object with "jsonrpc": "2.0", an id that is a string, a number or
// null, a method that is a string, and a method or an id to answer), else answered with
// an error; and the requests it counts are those with a method and an id. Reads of the
// whole input at once and of a line at a time give the same verdicts.
func FuzzLineFilter(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{bad` + "\n" + `[1,2]` + "\n" + `{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"json\u0072pc":"2.0","id":null,"method":"x","id":2}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}` + "\n\n  \n" + `{"jsonrpc":"2.0","method":3}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var want []string
		for line := range bytes.SplitSeq([]byte(input), []byte("\n")) {
			if v := expectedVerdict(bytes.TrimSpace(line)); v != "" {
				want = append(want, v)
			}
		}
		for _, size := range []int{len(input) + 1, 0} {
			got := filterVerdicts(t, input, size)
			if !slices.Equal(got, want) {
				t.Fatalf("reads of %d bytes: verdicts %q, encoding/json says %q", size, got, want)
			}
		}
	})
}

// expectedVerdict is what encoding/json makes of a line: "" for a blank one, "pass N"
// for a message with N requests, "reject" for anything else.
func expectedVerdict(line []byte) string {
	if len(line) == 0 {
		return ""
	}
	var m map[string]json.RawMessage
	if !json.Valid(line) || json.Unmarshal(line, &m) != nil || m == nil {
		return "reject"
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return "reject"
	}
	id, hasID := m["id"]
	answerable := false
	if hasID {
		var v any
		_ = json.Unmarshal(id, &v)
		switch v.(type) {
		case string, float64:
			answerable = true
		case nil:
		default:
			return "reject"
		}
	}
	method, hasMethod := m["method"]
	if hasMethod {
		var s string
		if json.Unmarshal(method, &s) != nil {
			return "reject"
		}
	}
	switch {
	case !hasMethod && !answerable:
		return "reject"
	case hasMethod && answerable:
		return "pass 1"
	}
	return "pass 0"
}

// filterVerdicts runs input through a line filter, read size bytes at a time (0: a line
// at a time), and returns its verdict on each line it passed or answered.
func filterVerdicts(t *testing.T, input string, size int) []string {
	var got []string
	var r io.Reader = &lineReader{rest: []byte(input)}
	if size > 0 {
		r = &chunkReader{b: []byte(input), n: size}
	}
	f := &lineFilter{r: r,
		accept: func(n int) { got = append(got, map[int]string{0: "pass 0", 1: "pass 1"}[n]) },
		reject: func(json.RawMessage, int, string) { got = append(got, "reject") }}
	if _, err := io.Copy(io.Discard, f); err != nil {
		t.Fatal(err)
	}
	return got
}

// lineReader returns one line, with its newline, a read.
type lineReader struct{ rest []byte }

func (l *lineReader) Read(p []byte) (int, error) {
	if len(l.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexByte(l.rest, '\n') + 1
	if n == 0 {
		n = len(l.rest)
	}
	n = copy(p, l.rest[:n])
	l.rest = l.rest[n:]
	return n, nil
}
