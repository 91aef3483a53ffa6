package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil/sandboxrouter"
)

// TestTokenHeader: behind a proxy that removes Authorization, the token in Boris-Token
// admits a client, sessionful and stateless, and names the same workspace as the same
// token sent as a bearer token; a wrong or missing one is refused.
func TestTokenHeader(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Token = "fleet-token-0123456789"
	_, ts := start(t, cfg)

	cs, err := dialAt(t, ts.URL, "", sessionful)
	if err == nil {
		cs.Close()
		t.Fatal("a client without a token was admitted")
	}
	rt := header{key: TokenHeader, value: cfg.Token, next: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err = client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: sessionful})
	if err != nil {
		t.Fatalf("sessionful client with %s: %v", TokenHeader, err)
	}
	defer cs.Close()
	if out := bashText(t, cs, "echo via-header"); !strings.Contains(out, "via-header") {
		t.Errorf("bash through %s = %q", TokenHeader, out)
	}

	// Stateless: the header's credential keys the same workspace as the bearer token.
	viaHeader, err := dialStateless(t, ts.URL, rt)
	if err != nil {
		t.Fatal(err)
	}
	bashText(t, viaHeader, "export FLEET_MARK=same-workspace")
	viaBearer, err := dialStateless(t, ts.URL, header{key: "Authorization", value: "Bearer " + cfg.Token, next: http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	if out := bashText(t, viaBearer, "echo mark=$FLEET_MARK"); !strings.Contains(out, "mark=same-workspace") {
		t.Errorf("the bearer token's workspace is not the header's: %q", out)
	}

	for _, v := range []string{"wrong-token", ""} {
		resp := post(t, ts.URL+"/mcp", initBody, map[string]string{TokenHeader: v})
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), TokenHeader) {
			t.Errorf("%s %q: %d %s, want 401 naming the header", TokenHeader, v, resp.StatusCode, body)
		}
	}
	// Authorization, when sent, is the one checked.
	resp := post(t, ts.URL+"/mcp", initBody, map[string]string{TokenHeader: cfg.Token, "Authorization": "Bearer wrong"})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("right %s with a wrong Authorization: %d, want 401", TokenHeader, resp.StatusCode)
	}
}

// TestHealthUnavailableWhenClosing: /health answers 503 once the server starts to shut
// down, so that readiness fails and no new work is routed to it.
func TestHealthUnavailableWhenClosing(t *testing.T) {
	t.Parallel()
	srv, ts := start(t, testConfig(t))
	get := func() int {
		resp, err := http.Get(ts.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("/health before shutdown = %d", code)
	}
	srv.Close()
	if code := get(); code != http.StatusServiceUnavailable {
		t.Errorf("/health after shutdown began = %d, want 503", code)
	}
}

// viaRouter returns a client transport that sends every request through a router keeping
// agent-sandbox's contract to the sandbox named id, with the sandbox's token in
// Boris-Token and a credential for the router itself in Authorization, which the router
// consumes.
func viaRouter(t testing.TB, boris *httptest.Server, id, token string, timeout time.Duration) http.RoundTripper {
	t.Helper()
	addr := strings.TrimPrefix(boris.URL, "http://")
	rt := sandboxrouter.New(func(got, ns string, port int) (string, error) {
		if got != id || ns != "team-a" || port != 8888 {
			return "", fmt.Errorf("no sandbox %s/%s:%d", ns, got, port)
		}
		return addr, nil
	}, timeout)
	router := httptest.NewServer(rt)
	t.Cleanup(func() {
		router.Close()
		rt.Close()
	})
	u, _ := url.Parse(router.URL)
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		r.Header.Set("X-Sandbox-ID", id)
		r.Header.Set("X-Sandbox-Namespace", "team-a")
		r.Header.Set("Authorization", "Bearer router-credential")
		r.Header.Set(TokenHeader, token)
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestThroughRouter: a client that reaches Boris only through a router keeping
// agent-sandbox's contract (Authorization removed, every request cut at the router's
// timeout) works with its token in Boris-Token over both protocol models, and a command
// that outlasts the router's timeout answers before it, going on as a background task
// whose output can be read afterwards.
func TestThroughRouter(t *testing.T) {
	t.Parallel()
	const timeout = 4 * time.Second
	cfg := testConfig(t)
	cfg.Token = "sandbox-token-0123456789"
	cfg.RouterTimeout = timeout
	_, ts := start(t, cfg)
	rt := viaRouter(t, ts, "sb-1", cfg.Token, timeout)
	for _, version := range []string{sessionful, stateless} {
		t.Run(version, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			// The router cuts the standalone event stream (a GET) at its timeout too: the
			// client opens it again, as the transport says it may.
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://router/mcp", HTTPClient: &http.Client{Transport: rt}},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if out := bashText(t, cs, "echo routed"); !strings.Contains(out, "routed") {
				t.Fatalf("bash through the router = %q", out)
			}
			// Outlasts the router's timeout: the call must answer before it with a task.
			out := bashText(t, cs, "sleep 6; echo finished-late")
			m := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("a command longer than the router's timeout answered %q, want a background task", out)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "task_output", Arguments: map[string]any{"task_id": m[1], "until": "finished-late", "wait_ms": 30000}})
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); res.IsError || !strings.Contains(got, "finished-late") {
				t.Errorf("task_output after the router's timeout = %q", got)
			}
		})
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// initRequest posts POST /init with the bootstrap secret and a body.
func postInit(t *testing.T, url, secret, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/init", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set(InitHeader, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestInitOnce: a Boris started with a bootstrap secret and no token (a warm pod) refuses
// every call until the control plane gives it its token with POST /init, which works once,
// only with the secret and not from the sandbox itself; a Boris started again on the same
// state directory (a resumed sandbox) accepts the same token without a new /init.
func TestInitOnce(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.InitToken = "bootstrap-secret-0123456789"
	cfg.StateDir, cfg.StateDirGiven = t.TempDir(), true
	cfg.Host = "0.0.0.0"
	const token = "claim-token-0123456789abcdef"
	remote := func(s *Server) { s.localPeer = func(*http.Request) bool { return false } }

	// From the sandbox itself, even with the secret: refused.
	_, local := start(t, cfg)
	if code, body := postInit(t, local.URL, cfg.InitToken, `{"token":"`+token+`"}`); code != http.StatusForbidden {
		t.Errorf("/init from the sandbox itself = %d %s, want 403", code, body)
	}

	_, ts := startWith(t, cfg, remote)
	dialToken := func(url, tok string) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		return client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: header{key: TokenHeader, value: tok, next: http.DefaultTransport}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: stateless})
	}
	resp := post(t, ts.URL+"/mcp", initBody, map[string]string{TokenHeader: token})
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "/init") {
		t.Errorf("/mcp before /init = %d %s, want 401 naming /init", resp.StatusCode, body)
	}
	for _, c := range []struct{ secret, body string }{
		{"", `{"token":"` + token + `"}`},
		{"wrong-secret", `{"token":"` + token + `"}`},
	} {
		if code, body := postInit(t, ts.URL, c.secret, c.body); code != http.StatusUnauthorized {
			t.Errorf("/init with secret %q = %d %s, want 401", c.secret, code, body)
		}
	}
	for _, body := range []string{`{"token":"short"}`, `not json`, `{"token":"` + token + `","env":{"BORIS_TOKEN":"x"}}`} {
		if code, got := postInit(t, ts.URL, cfg.InitToken, body); code != http.StatusBadRequest {
			t.Errorf("/init %s = %d %s, want 400", body, code, got)
		}
	}
	if code, body := postInit(t, ts.URL, cfg.InitToken, `{"token":"`+token+`","env":{"CLAIM_NAME":"claim-7"}}`); code != http.StatusNoContent {
		t.Fatalf("/init = %d %s, want 204", code, body)
	}
	cs, err := dialToken(ts.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	if out := bashText(t, cs, "echo claim=$CLAIM_NAME"); !strings.Contains(out, "claim=claim-7") {
		t.Errorf("the environment given by /init is not the commands': %q", out)
	}
	cs.Close()
	if code, _ := postInit(t, ts.URL, cfg.InitToken, `{"token":"`+token+`"}`); code != http.StatusNoContent {
		t.Errorf("/init again with the same token = %d, want 204", code)
	}
	if code, body := postInit(t, ts.URL, cfg.InitToken, `{"token":"another-token-0123456789"}`); code != http.StatusConflict {
		t.Errorf("/init with another token = %d %s, want 409", code, body)
	}
	if _, err := dialToken(ts.URL, "another-token-0123456789"); err == nil {
		t.Error("a second /init's token was admitted")
	}

	// Started again on the same state directory: the claim holds.
	_, again := startWith(t, cfg, remote)
	cs, err = dialToken(again.URL, token)
	if err != nil {
		t.Fatalf("the claimed token after a restart: %v", err)
	}
	cs.Close()
}
