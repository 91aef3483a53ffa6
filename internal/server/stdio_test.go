package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// TestClassify checks the scanning classifier against decoding, on messages whose ids
// and methods hide in strings, escapes and nested values.
func TestClassify(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo \"}\" '{'"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method \"id\" not found"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3,"method":"nested"}}`,
		`{"params":{"id":1},"method":"x","jsonrpc":"2.0"}`,
		`  { "id" : 5 , "method" : "ping" }  `,
		`{"\u0069d":9,"method":"ping"}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"\\\" id \\"}],"id":2}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{}}]`,
		`[]`,
		`{}`,
		`"id"`,
	}
	for _, line := range lines {
		wantQ, wantR := decodeClassify(t, []byte(line))
		if q, r := classify([]byte(line)); q != wantQ || r != wantR {
			t.Errorf("classify(%s) = %d requests, %d replies; want %d, %d", line, q, r, wantQ, wantR)
		}
	}
}

// decodeClassify is classify done by decoding: the reference.
func decodeClassify(t *testing.T, line []byte) (requests, replies int) {
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) == nil {
		for _, m := range batch {
			q, r := decodeClassify(t, m)
			requests, replies = requests+q, replies+r
		}
		return requests, replies
	}
	var one struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if err := json.Unmarshal(line, &one); err != nil || len(one.ID) == 0 || string(one.ID) == "null" {
		return 0, 0
	}
	if one.Method != nil {
		return 1, 0
	}
	return 0, 1
}

func TestInspect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line     string
		requests int
		code     int // 0: passed on
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 1, 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, 0},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, 0, 0},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, 0},
		{`{"method":"ping","params":{"jsonrpc":"1.0","id":{}},"id":2,"jsonrpc":"2.0"}`, 1, 0},
		{`{"jsonrpc":"\u0032.0","id":1,"method":"ping"}`, 1, 0},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]`, 0, codeInvalidRequest},
		{`not json`, 0, codeParseError},
		{`{"a":1} {"b":2}`, 0, codeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, 0, codeParseError},
		{`5`, 0, codeInvalidRequest},
		{`[]`, 0, codeInvalidRequest},
		{`[5]`, 0, codeInvalidRequest},
		{`{"foo":1}`, 0, codeInvalidRequest},
		{`{"JSONRPC":"2.0","id":1,"method":"ping"}`, 0, codeInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, 0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, 0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, 0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, 0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","result":{}}`, 0, codeInvalidRequest},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0"}]`, 0, codeInvalidRequest},
	} {
		requests, e := inspect([]byte(tc.line))
		code := 0
		if e != nil {
			code = e.code
		}
		if code != tc.code || requests != tc.requests {
			t.Errorf("inspect(%s) = %d requests, error %v; want %d, code %d", tc.line, requests, e, tc.requests, tc.code)
		}
	}
}

// TestStdioSurvivesBadLines: lines that are not JSON-RPC messages are answered with an
// error, and the session goes on.
func TestStdioSurvivesBadLines(t *testing.T) {
	t.Parallel()
	c := stdioPipes(t, nil)
	send := func(line string) { c.write(line + "\n") }
	reply := func() map[string]any {
		line := c.read()
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, bad := range []string{"not json", `{"foo":1}`, `[]`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`, strings.Repeat("x", 100<<10),
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`} {
		send(bad)
		if m := reply(); m["error"] == nil {
			t.Errorf("line %d: reply %v, want an error", i, m)
		}
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 10+i))
		if m := reply(); m["result"] == nil || m["id"] != float64(10+i) {
			t.Errorf("ping after bad line %d: %v, want its result", i, m)
		}
	}
	// A message without its newline, from a client that waits for the answer.
	c.write(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	if m := reply(); m["id"] != float64(99) || m["result"] == nil {
		t.Errorf("ping without a newline: %v", m)
	}
	if err := c.close(); err != nil {
		t.Errorf("RunStdio: %v", err)
	}
}

// stdioClient is a test's end of a server run over in-memory STDIO pipes.
type stdioClient struct {
	tb   testing.TB
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

// stdioPipes starts a STDIO server whose commands see environ, after setup, if any.
func stdioPipes(tb testing.TB, environ []string, setup ...func(*Server)) *stdioClient {
	cfg := newConfig(tb)
	cfg.Transport = "stdio"
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), environ)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range setup {
		f(srv)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{tb: tb, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() { c.done <- srv.RunStdio(tb.Context(), inR, outW) }()
	return c
}

func (c *stdioClient) write(s string) {
	if _, err := io.WriteString(c.in, s); err != nil {
		c.tb.Fatal(err)
	}
}

// read returns the next line the server wrote.
func (c *stdioClient) read() string {
	line, err := c.out.ReadString('\n')
	if err != nil {
		c.tb.Fatalf("no reply: %v", err)
	}
	return line
}

// close ends the client's input and returns what RunStdio returned.
func (c *stdioClient) close() error {
	c.in.Close()
	return <-c.done
}

// TestStdioKeepsNoStreamUnwatched: over STDIO the live view's stream is kept only when
// --watch gives it somewhere to be served; over HTTP always, unless --no-watch.
func TestStdioKeepsNoStreamUnwatched(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport, watchAddr string
		noWatch, want        bool
	}{
		{"stdio", "", false, false},
		{"stdio", "127.0.0.1:7777", false, true},
		{"http", "", false, true},
		{"http", "", true, false},
	} {
		cfg := newConfig(t)
		cfg.Transport, cfg.WatchAddr, cfg.NoWatch = tc.transport, tc.watchAddr, tc.noWatch
		srv, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.Watch() != nil; got != tc.want {
			t.Errorf("%+v: stream kept %v, want %v", tc, got, tc.want)
		}
		srv.Close()
	}
}

// TestLineFilterSplitReads feeds the line filter messages in reads of every small size, so
// that lines end anywhere within a read and span several, and reads what it passes on
// in large reads and a byte at a time: it passes exactly the messages on, answers the
// line that is not one, and takes a last line without its newline.
func TestLineFilterSplitReads(t *testing.T) {
	input := `{"jsonrpc":"2.0","method":"a"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"b","params":{"x":"` + strings.Repeat("y", 300) + `"}}` + "\n" +
		"not json\n\n" +
		`{"jsonrpc":"2.0","method":"c"}` + "\n" + `{"jsonrpc":"2.0","method":"d"}`
	want := `{"jsonrpc":"2.0","method":"a"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"b","params":{"x":"` + strings.Repeat("y", 300) + `"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"c"}` + "\n" + `{"jsonrpc":"2.0","method":"d"}` + "\n"
	for size := 1; size <= 9; size++ {
		var rejected []string
		f := &lineFilter{r: &chunkReader{b: []byte(input), n: size}, accept: func(int) {},
			reject: func(_ json.RawMessage, _ int, msg string) { rejected = append(rejected, msg) }}
		var r io.Reader = f
		if size%2 == 1 {
			r = iotest.OneByteReader(f)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("reads of %d bytes: %v", size, err)
		}
		if string(got) != want {
			t.Errorf("reads of %d bytes passed on:\n%s\nwant:\n%s", size, got, want)
		}
		if len(rejected) != 1 || !strings.HasPrefix(rejected[0], "parse error") {
			t.Errorf("reads of %d bytes: answered %q, want one parse error", size, rejected)
		}
	}
}

// TestToolsListedAtOnce lists the tools in the same breath as initializing: the server,
// which registers its tools beside answering initialize, answers tools/list next, with
// every tool, and says that the list never changes (listChanged false, under which the
// SDK sends no notification when the tools are added).
func TestToolsListedAtOnce(t *testing.T) {
	c := stdioPipes(t, nil)
	c.write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	var init struct {
		Result struct {
			Capabilities struct {
				Tools *struct {
					ListChanged bool `json:"listChanged"`
				} `json:"tools"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.read()), &init); err != nil {
		t.Fatal(err)
	}
	if tools := init.Result.Capabilities.Tools; tools == nil || tools.ListChanged {
		t.Errorf("initialize says tools %+v; want tools whose list never changes", tools)
	}
	var list struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	line := c.read()
	if err := json.Unmarshal([]byte(line), &list); err != nil || list.ID != 2 {
		t.Fatalf("after initialize, the server wrote %s; want the answer to tools/list", line)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"bash", "view", "str_replace", "create_file", "grep", "find", "task_output"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list gave %v, without %s", names, want)
		}
	}
}

// TestCallsWaitBeforeCalls: initialize and tools/list are answered without calling what
// BeforeCalls was given; a tool call runs only once it has returned, and calls it again.
func TestCallsWaitBeforeCalls(t *testing.T) {
	dir := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	c := stdioPipes(t, []string{"PATH=/usr/bin:/bin"}, func(s *Server) {
		s.BeforeCalls(func() {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
		})
	})
	marker := filepath.Join(dir, "ran")
	c.write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	for _, id := range []string{`"id":1,`, `"id":2,`} {
		if line := c.read(); !strings.Contains(line, id) {
			t.Fatalf("got %s; want the answer with %s", line, id)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("initialize and tools/list called it %d times; want none", n)
	}
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":{"command":"touch %s"}}}` + "\n"
	replies := make(chan string)
	go func() {
		defer close(replies)
		for {
			line, err := c.out.ReadString('\n')
			if err != nil {
				return
			}
			replies <- line
		}
	}()
	c.write(fmt.Sprintf(call, 3, marker))
	select {
	case <-entered:
	case line := <-replies:
		t.Fatalf("the call was answered without waiting: %s", line)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran before the call's wait returned")
	}
	close(release)
	if line := <-replies; !strings.Contains(line, `"id":3,`) || strings.Contains(line, `"isError":true`) {
		t.Fatalf("got %s; want the call's answer", line)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the command did not run once the wait returned: %v", err)
	}
	c.write(fmt.Sprintf(call, 4, marker))
	if line := <-replies; !strings.Contains(line, `"id":4,`) {
		t.Fatalf("got %s; want the second call's answer", line)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("two calls called it %d times; want 2", n)
	}
	if err := c.close(); err != nil {
		t.Errorf("RunStdio: %v", err)
	}
}
