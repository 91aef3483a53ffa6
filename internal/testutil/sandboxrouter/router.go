// Package sandboxrouter is a reverse proxy that keeps the documented request contract of
// agent-sandbox's sandbox router, for tests of Boris's side of it: it routes by
// X-Sandbox-ID, X-Sandbox-Namespace and X-Sandbox-Port, removes Authorization, Host and an
// inbound X-Forwarded-For, speaks HTTP/1.1 to the sandbox, flushes at once, and cuts every
// request at its timeout. It is a test double written from that contract, not the router.
package sandboxrouter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// DefaultTimeout is the router's default --proxy-timeout.
const DefaultTimeout = 180 * time.Second

// Router is the proxy. Resolve maps a sandbox's name, namespace and port to the address to
// dial (host:port), as the router's DNS name or Pod-IP cache would.
type Router struct {
	Resolve func(id, namespace string, port int) (string, error)
	Timeout time.Duration // 0: DefaultTimeout
	// Retries is how many times a failed dial is tried again, with a backoff from 200 ms
	// (halved in tests by RetryDelay).
	Retries    int
	RetryDelay time.Duration // 0: 200 ms
	// StreamBodies forwards each request's body as it arrives, as httputil.ReverseProxy
	// does and agent-sandbox's Go router with it. Under net/http's default half-duplex
	// HTTP/1 server, a response that starts before the proxy has read its request's body
	// to the end makes the server discard the rest of that body while the transport is
	// still reading it, and the transport then closes the sandbox's connection
	// mid-response: the client sees its stream cut. Boris answers a tool call as soon as
	// it has read the request, so under load it meets this race. Set StreamBodies to
	// reproduce it; by default the router reads each body (up to 16 MiB) before it
	// forwards the request.
	StreamBodies bool

	once      sync.Once
	transport *http.Transport
}

// New returns a router that resolves with resolve.
func New(resolve func(id, namespace string, port int) (string, error), timeout time.Duration) *Router {
	return &Router{Resolve: resolve, Timeout: timeout, Retries: 3, RetryDelay: 20 * time.Millisecond}
}

// maxBody bounds a request body the router reads before forwarding it.
const maxBody = 16 << 20

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Close drops the router's idle connections.
func (rt *Router) Close() {
	rt.init()
	rt.transport.CloseIdleConnections()
}

func (rt *Router) init() {
	rt.once.Do(func() {
		rt.transport = &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:   false,
			DisableKeepAlives:   true,
			MaxIdleConns:        1000,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}
	})
}

func detail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"detail": msg})
}

// ServeHTTP routes one request.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" && r.Header.Get("X-Sandbox-ID") == "" {
		detail(w, http.StatusOK, "ok")
		return
	}
	id := r.Header.Get("X-Sandbox-ID")
	if id == "" {
		detail(w, http.StatusBadRequest, "X-Sandbox-ID header is required.")
		return
	}
	if len(id) > 63 || !dnsLabel.MatchString(id) {
		detail(w, http.StatusBadRequest, "Invalid sandbox ID format.")
		return
	}
	ns := r.Header.Get("X-Sandbox-Namespace")
	if ns == "" {
		ns = "default"
	}
	if len(ns) > 63 || !dnsLabel.MatchString(ns) {
		detail(w, http.StatusBadRequest, "Invalid namespace format.")
		return
	}
	port := 8888
	if p := r.Header.Get("X-Sandbox-Port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			detail(w, http.StatusBadRequest, "Invalid port format.")
			return
		}
		port = n
	}
	addr, err := rt.Resolve(id, ns, port)
	if err != nil {
		detail(w, http.StatusBadGateway, "Could not connect to the backend sandbox: "+id)
		return
	}
	rt.init()
	target := &url.URL{Scheme: "http", Host: addr, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = ""
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("X-Forwarded-For")
			pr.SetXForwarded()
		},
		Transport:     retry{rt},
		ErrorLog:      log.New(io.Discard, "", 0), // a request cut at the timeout is expected
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			detail(w, http.StatusBadGateway, fmt.Sprintf("Could not connect to the backend sandbox: %s", id))
		},
	}
	ctx := r.Context()
	timeout := rt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !rt.StreamBodies && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			detail(w, http.StatusRequestEntityTooLarge, "Request body too large or unreadable.")
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	rp.ServeHTTP(w, r.WithContext(ctx))
}

// retry tries a request again when its dial failed, never once it may have been sent.
type retry struct{ rt *Router }

func (t retry) RoundTrip(r *http.Request) (*http.Response, error) {
	delay := t.rt.RetryDelay
	if delay <= 0 {
		delay = 200 * time.Millisecond
	}
	for attempt := 0; ; attempt++ {
		resp, err := t.rt.transport.RoundTrip(r)
		var op *net.OpError
		if err == nil || attempt >= t.rt.Retries || !errors.As(err, &op) || op.Op != "dial" {
			return resp, err
		}
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}
