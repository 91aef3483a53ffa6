package watch

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, h *Hub, o HandlerOptions) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	wh := Handler(h, o)
	mux.Handle("/watch", wh)
	mux.Handle("/watch/", wh)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func get(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{CheckRedirect: noRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func TestTokenExchangeForCookie(t *testing.T) {
	h := NewHub(Options{Redact: "tok123"})
	srv := serve(t, h, HandlerOptions{Token: "tok123", Loopback: true})
	if res := get(t, srv.URL+"/watch", nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", res.StatusCode)
	}
	if res := get(t, srv.URL+"/watch?token=wrong", nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", res.StatusCode)
	}
	res := get(t, srv.URL+"/watch?token=tok123", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/watch" {
		t.Fatalf("exchange: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || strings.Contains(cookies[0].Value, "tok123") {
		t.Fatalf("cookie = %+v", cookies)
	}
	c := cookies[0].Name + "=" + cookies[0].Value
	if res := get(t, srv.URL+"/watch", map[string]string{"Cookie": c}); res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("page with cookie: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res := get(t, srv.URL+"/watch/events", map[string]string{"Cookie": cookieName + "=forged"}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged cookie: %d", res.StatusCode)
	}
	if res := get(t, srv.URL+"/watch/app.js", nil); res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("asset: %d, CORS %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}
}

func TestForeignHostAndOriginRefused(t *testing.T) {
	srv := serve(t, NewHub(Options{}), HandlerOptions{Loopback: true})
	if res := get(t, srv.URL+"/watch", map[string]string{"Origin": "https://evil.example"}); res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/watch", nil)
	req.Host = "evil.example:80"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("rebinding host: %d", res.StatusCode)
	}
	// A cross-site POST to stop is refused before it is read.
	req, _ = http.NewRequest("POST", srv.URL+"/watch/stop", strings.NewReader(`{"stop":"c1"}`))
	req.Header.Set("Origin", "https://evil.example")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site stop: %d", res.StatusCode)
	}
}

func TestStopEndpoint(t *testing.T) {
	h := NewHub(Options{})
	srv := serve(t, h, HandlerOptions{Loopback: true})
	stopped := make(chan struct{})
	release := h.stoppable("c7", func() { close(stopped) })
	defer release()
	post := func(body string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/watch/stop", strings.NewReader(body))
		req.Header.Set("Origin", srv.URL)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	if code := post(`{"stop":"c7"}`); code != http.StatusOK {
		t.Fatalf("stop: %d", code)
	}
	<-stopped
	if code := post(`{"stop":"c7"}`); code != http.StatusNotFound {
		t.Errorf("second stop: %d", code)
	}
	if code := post(`nonsense`); code != http.StatusBadRequest {
		t.Errorf("bad body: %d", code)
	}
}

func TestEventsResumeFromLastEventID(t *testing.T) {
	h := NewHub(Options{})
	srv := serve(t, h, HandlerOptions{Token: "tk"})
	h.Publish(Event{Kind: KindSession, Session: "s1", Client: "c"})
	for _, s := range []string{"a", "b", "c"} {
		h.Publish(Event{Kind: KindOutput, Session: "s1", Text: s})
	}
	read := func(hdr map[string]string, n int) []string {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/watch/events", nil)
		req.Header.Set("Authorization", "Bearer tk")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		var lines []string
		sc := bufio.NewScanner(res.Body)
		for len(lines) < n && sc.Scan() {
			if l := sc.Text(); l != "" {
				lines = append(lines, l)
			}
		}
		return lines
	}
	// From the start: the live session (no id: it is a snapshot), then the history.
	got := read(nil, 9)
	if !strings.HasPrefix(got[0], `data: {"id":1,`) || got[1] != "id: 1" || got[3] != "id: 2" || got[7] != "id: 4" || !strings.Contains(got[8], `"text":"c"`) {
		t.Errorf("from the start:\n%s", strings.Join(got, "\n"))
	}
	got = read(map[string]string{"Last-Event-ID": "3"}, 2)
	if got[0] != "id: 4" || !strings.Contains(got[1], `"text":"c"`) {
		t.Errorf("resumed after 3:\n%s", strings.Join(got, "\n"))
	}
}

func TestStreamsEndWhenHubCloses(t *testing.T) {
	h := NewHub(Options{})
	srv := serve(t, h, HandlerOptions{})
	h.Publish(Event{Kind: KindOutput, Text: "x"})
	res := get(t, srv.URL+"/watch/events", nil)
	br := bufio.NewReader(res.Body)
	if l, err := br.ReadString('\n'); err != nil || l != "id: 1\n" {
		t.Fatalf("first line %q, %v", l, err)
	}
	h.Close()
	if _, err := io.ReadAll(br); err != nil {
		t.Errorf("stream did not end cleanly: %v", err)
	}
}
