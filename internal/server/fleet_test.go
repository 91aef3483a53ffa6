package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
