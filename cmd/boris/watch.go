package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/watch"
)

// watchCLI is `boris watch`: follow a server's live view in a terminal.
type watchCLI struct {
	URL   string `arg:"" placeholder:"URL" default:"http://127.0.0.1:8080" help:"The Boris server to follow: its base URL or its /watch page (stdio servers: the --watch address)."`
	Token string `placeholder:"TOKEN" help:"The server's bearer token, if it has one." envvar:"BORIS_TOKEN"`
}

// pendingDelay is how long a call's line waits for its end, so that a quick call takes
// one line with its outcome.
const pendingDelay = 500 * time.Millisecond

func runWatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var c watchCLI
	err := config.ParseFlags(&c, args, getenv)
	if errors.Is(err, config.ErrHelp) {
		config.WriteHelp(stdout, "boris watch [URL] [flags]", "Follow a Boris server's tool calls as they happen: one line per call, with streamed output indented.", &c)
		return nil
	}
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	url := eventsURL(c.URL)
	p := newPrinter(stdout)
	stopTicker := p.tick(ctx)
	defer stopTicker()
	var last string
	backoff := time.Second
	for {
		got, err := follow(ctx, url, c.Token, &last, p)
		if ctx.Err() != nil {
			return nil
		}
		var fatal fatalError
		if errors.As(err, &fatal) {
			return err
		}
		if got {
			backoff = time.Second
		}
		fmt.Fprintf(stderr, "boris watch: %v; retrying in %v\n", err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

type fatalError struct{ error }

// eventsURL turns what the user gave into the event stream's URL.
func eventsURL(u string) string {
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, "/events")
	u = strings.TrimSuffix(u, "/watch")
	u = strings.TrimSuffix(u, "/mcp")
	return u + "/watch/events"
}

// follow reads the stream until it ends, resuming after *last. It reports whether it
// got any event.
func follow(ctx context.Context, url, token string, last *string, p *printer) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, fatalError{fmt.Errorf("bad URL: %w", err)}
	}
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if *last != "" {
		req.Header.Set("Last-Event-ID", *last)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer func() { _ = res.Body.Close() }()
	switch {
	case res.StatusCode == http.StatusUnauthorized && token != "":
		return false, fatalError{fmt.Errorf("%s: the server refused the token: it is not this server's token; pass the one the server was started with (--token or BORIS_TOKEN)", url)}
	case res.StatusCode == http.StatusUnauthorized:
		return false, fatalError{fmt.Errorf("%s: the server needs its token: pass --token or set BORIS_TOKEN", url)}
	case res.StatusCode == http.StatusNotFound:
		return false, fatalError{fmt.Errorf("%s: not found: is the live view on (not --no-watch), and is this a Boris server?", url)}
	case res.StatusCode != http.StatusOK:
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return false, fatalError{fmt.Errorf("%s: %s: %s", url, res.Status, strings.TrimSpace(string(b)))}
	}
	got := false
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				var e watch.Event
				if json.Unmarshal([]byte(data), &e) == nil {
					p.event(e)
					got = true
				}
				if id != "" {
					*last = id
				}
			}
			id, data = "", ""
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(line[5:], " ")
		}
	}
	if err := sc.Err(); err != nil {
		return got, err
	}
	return got, errors.New("the server closed the stream")
}

// ansi matches terminal escape sequences. It is compiled when first needed: the server
// never does.
var ansi = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-_]`)
})

// printer writes events compactly: one line per call (its outcome on the same line when
// it ends quickly), output indented below it.
type printer struct {
	mu       sync.Mutex
	w        io.Writer
	sessions map[string]string // id → label
	pending  map[uint64]pendingCall
	partial  map[string]string // call/task and stream → a line not yet ended
}

type pendingCall struct {
	e    watch.Event
	seen time.Time
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, sessions: map[string]string{}, pending: map[uint64]pendingCall{}, partial: map[string]string{}}
}

// tick prints the lines of calls that have run for a while without output.
func (p *printer) tick(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(pendingDelay / 2)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				p.mu.Lock()
				for id, pc := range p.pending {
					if now.Sub(pc.seen) >= pendingDelay {
						p.callLine(id, "")
					}
				}
				p.mu.Unlock()
			}
		}
	}()
	return cancel
}

func (p *printer) label(session string) string {
	if l, ok := p.sessions[session]; ok {
		return l
	}
	if len(session) > 8 {
		return session[:8]
	}
	return session
}

// callLine prints a pending call's line, with tail appended.
func (p *printer) callLine(id uint64, tail string) {
	pc, ok := p.pending[id]
	if !ok {
		return
	}
	delete(p.pending, id)
	e := pc.e
	fmt.Fprintf(p.w, "%s %s %s %s%s\n", e.Time.Local().Format("15:04:05"), p.label(e.Session), e.Tool, oneLine(e.Args), tail)
}

func (p *printer) event(e watch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case watch.KindSession:
		label := e.Client
		if label == "" {
			label = "client"
		}
		if e.Session != "" {
			label += "·" + e.Session[:min(len(e.Session), 8)]
		}
		p.sessions[e.Session] = label
		fmt.Fprintf(p.w, "%s %s: session opened (%s %s, %s) in %s\n", e.Time.Local().Format("15:04:05"), label, e.Client, e.Version, e.Transport, e.Cwd)
	case watch.KindSessionEnd:
		fmt.Fprintf(p.w, "%s %s: session closed\n", e.Time.Local().Format("15:04:05"), p.label(e.Session))
	case watch.KindCall:
		p.pending[e.Call] = pendingCall{e: e, seen: time.Now()}
	case watch.KindOutput:
		key := fmt.Sprintf("%d/%s/%s", e.Call, e.Task, e.Stream)
		if e.Task == "" {
			p.callLine(e.Call, "")
		}
		text := p.partial[key] + ansi().ReplaceAllString(e.Text, "")
		lines := strings.Split(text, "\n")
		p.partial[key] = lines[len(lines)-1]
		for _, l := range lines[:len(lines)-1] {
			p.outLine(e, l)
		}
	case watch.KindCallEnd:
		p.flushPartial(fmt.Sprintf("%d//", e.Call), e)
		tail := "  → " + e.Outcome + " (" + (time.Duration(e.DurationMS) * time.Millisecond).String() + ")"
		if e.Summary != "" {
			tail += ": " + oneLine(e.Summary)
		}
		if e.Checkpoint != "" {
			tail += fmt.Sprintf(" [checkpoint %s, %d changed; rewind {\"to\": %q}]", e.Checkpoint, e.Files, e.Checkpoint)
		}
		if _, ok := p.pending[e.Call]; ok {
			p.callLine(e.Call, tail)
		} else {
			fmt.Fprintf(p.w, "    %s\n", strings.TrimPrefix(tail, "  "))
		}
		if e.Diff != "" {
			lines := strings.Split(strings.TrimSuffix(e.Diff, "\n"), "\n")
			for i, l := range lines {
				if i == 40 {
					fmt.Fprintf(p.w, "    [… %d more diff lines]\n", len(lines)-i)
					break
				}
				fmt.Fprintf(p.w, "    %s\n", l)
			}
		}
	case watch.KindTask:
		fmt.Fprintf(p.w, "%s %s %s started: %s\n", e.Time.Local().Format("15:04:05"), p.label(e.Session), e.Task, oneLine(e.Args))
	case watch.KindTaskEnd:
		p.flushPartial(fmt.Sprintf("%d/%s/", e.Call, e.Task), e)
		fmt.Fprintf(p.w, "%s %s %s %s (after %v)\n", e.Time.Local().Format("15:04:05"), p.label(e.Session), e.Task, e.Outcome, time.Duration(e.DurationMS)*time.Millisecond)
	case watch.KindCheckpoint:
		fmt.Fprintf(p.w, "%s %s %s: checkpoint %s, %d changed\n", e.Time.Local().Format("15:04:05"), p.label(e.Session), e.Summary, e.Checkpoint, e.Files)
	case watch.KindIndex:
		fmt.Fprintf(p.w, "%s %s\n", e.Time.Local().Format("15:04:05"), e.Summary)
	case watch.KindDropped:
		fmt.Fprintf(p.w, "[%d events dropped: this watcher fell behind the server's history]\n", e.Count)
	}
}

func (p *printer) outLine(e watch.Event, l string) {
	prefix := "    "
	if e.Task != "" {
		prefix += e.Task + "│ "
	}
	if e.Stream == "stderr" {
		prefix += "! "
	}
	fmt.Fprintf(p.w, "%s%s\n", prefix, strings.TrimRight(l, "\r"))
}

// flushPartial prints the unfinished last lines of the streams whose keys start with
// prefix.
func (p *printer) flushPartial(prefix string, e watch.Event) {
	for _, stream := range []string{"stdout", "stderr"} {
		key := prefix + stream
		if l := p.partial[key]; l != "" {
			e.Stream = stream
			p.outLine(e, l)
		}
		delete(p.partial, key)
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		return string(r[:157]) + "..."
	}
	return s
}
