package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mjkoo/boris/internal/testutil/sandboxrouter"
)

// Fleet is N Borises on one machine, each in a network namespace of its own with a
// pod-like address on a bridge, behind a proxy that keeps agent-sandbox's router contract.
// It exercises Boris's side of that contract, nothing more: there is no controller, no
// scheduler and no Kubernetes, only what a sandbox's daemon sees.
type Fleet struct {
	Boris         string        // the binary
	Dir           string        // workspaces, state directories, the bootstrap secret
	RouterTimeout time.Duration // the router's --proxy-timeout, and Boris's --router-timeout
	Bootstrap     string        // the secret of --init-token-file, the same for all
	Sandboxes     []*Sandbox
	RouterURL     string

	tag    string // names the bridge and the namespaces of this fleet
	bridge string
	router *sandboxrouter.Router
	server *http.Server
}

// Sandbox is one Boris: its namespace, address, token and process.
type Sandbox struct {
	Name    string // the sandbox's name, as X-Sandbox-ID gives it
	NetNS   string
	IP      string
	Token   string
	Dir     string
	Cmd     *exec.Cmd
	Started time.Time // when its process started
	// FirstCall is how long it took from the process's start to the first tool call
	// answered through the router, /init included.
	FirstCall time.Duration
	Listening time.Duration // from the start to /init answered
	stderr    *bytes.Buffer
}

// bridgeCIDR is the fleet's network: the host is .0.1 on the bridge, sandboxes follow.
const (
	bridgeIP   = "10.213.0.1"
	bridgeMask = 16
	borisPort  = 8888
)

func sh(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// NewFleet makes the bridge and the router; sandboxes are added with Add.
func NewFleet(boris, dir string, routerTimeout time.Duration) (*Fleet, error) {
	f := &Fleet{Boris: boris, Dir: dir, RouterTimeout: routerTimeout, tag: strconv.Itoa(os.Getpid() % 100000)}
	f.bridge = "bfbr" + f.tag
	f.Bootstrap = rand.Text()
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte(f.Bootstrap+"\n"), 0o600); err != nil {
		return nil, err
	}
	for _, c := range [][]string{
		{"ip", "link", "add", f.bridge, "type", "bridge"},
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", bridgeIP, bridgeMask), "dev", f.bridge},
		{"ip", "link", "set", f.bridge, "up"},
	} {
		if err := sh(c...); err != nil {
			f.Close()
			return nil, err
		}
	}
	f.router = sandboxrouter.New(f.resolve, routerTimeout)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, err
	}
	f.RouterURL = "http://" + ln.Addr().String()
	f.server = &http.Server{Handler: f.router, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.server.Serve(ln) }()
	return f, nil
}

// resolve is the router's view of the cluster: a sandbox's name to its pod's address.
func (f *Fleet) resolve(id, namespace string, port int) (string, error) {
	if namespace != "default" {
		return "", fmt.Errorf("namespace %s", namespace)
	}
	for _, sb := range f.Sandboxes {
		if sb.Name == id {
			return net.JoinHostPort(sb.IP, strconv.Itoa(port)), nil
		}
	}
	return "", fmt.Errorf("no sandbox %s", id)
}

// Add makes sandbox i's namespace, address and directories.
func (f *Fleet) Add(i int) (*Sandbox, error) {
	sb := &Sandbox{
		Name:  fmt.Sprintf("sb-%d", i),
		NetNS: fmt.Sprintf("bf%s-%d", f.tag, i),
		IP:    fmt.Sprintf("10.213.%d.%d", 1+i/250, 1+i%250),
		Token: rand.Text(),
		Dir:   filepath.Join(f.Dir, fmt.Sprintf("sb-%d", i)),
	}
	host := fmt.Sprintf("bfh%s-%d", f.tag, i)
	if len(host) > 15 {
		host = host[len(host)-15:]
	}
	for _, d := range []string{"workspace", "state"} {
		if err := os.MkdirAll(filepath.Join(sb.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	f.Sandboxes = append(f.Sandboxes, sb)
	for _, c := range [][]string{
		{"ip", "netns", "add", sb.NetNS},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", sb.NetNS},
		{"ip", "link", "set", host, "master", f.bridge, "up"},
		{"ip", "-n", sb.NetNS, "addr", "add", fmt.Sprintf("%s/%d", sb.IP, bridgeMask), "dev", "eth0"},
		{"ip", "-n", sb.NetNS, "link", "set", "eth0", "up"},
		{"ip", "-n", sb.NetNS, "link", "set", "lo", "up"},
	} {
		if err := sh(c...); err != nil {
			return nil, err
		}
	}
	return sb, nil
}

// Start starts sb's Boris in its namespace, as a warm pod: no token, the bootstrap secret.
func (f *Fleet) Start(sb *Sandbox) error {
	sb.stderr = new(bytes.Buffer)
	// nsenter joins the namespace and execs Boris, which keeps its pid; unlike ip netns
	// exec, it mounts nothing.
	sb.Cmd = exec.Command("nsenter", "--net=/run/netns/"+sb.NetNS, f.Boris,
		"--transport=http", "--host=0.0.0.0", "--port="+strconv.Itoa(borisPort),
		"--workdir="+filepath.Join(sb.Dir, "workspace"),
		"--state-dir="+filepath.Join(sb.Dir, "state"),
		"--cache-dir="+filepath.Join(sb.Dir, "cache"),
		"--init-token-file="+filepath.Join(f.Dir, "bootstrap"),
		"--router-timeout="+f.RouterTimeout.String(),
		"--max-sessions=256", "--no-watch", "--log-level=warn")
	sb.Cmd.Stderr = sb.stderr
	sb.Cmd.Env = append(os.Environ(), "HOME="+sb.Dir)
	sb.Started = time.Now()
	return sb.Cmd.Start()
}

// Stop sends sig to sb's Boris and waits for it to exit.
func (f *Fleet) Stop(sb *Sandbox, sig syscall.Signal) error {
	if sb.Cmd == nil || sb.Cmd.Process == nil {
		return nil
	}
	_ = sb.Cmd.Process.Signal(sig)
	err := sb.Cmd.Wait()
	sb.Cmd = nil
	return err
}

// Claim does what the control plane does once a warm pod is claimed: it waits for the pod
// to be ready, then gives it its token with POST /init through the router. The time from
// the process's start to the first tool call answered is recorded.
func (f *Fleet) Claim(ctx context.Context, sb *Sandbox) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	base := f.RouterURL
	if Direct {
		base = "http://" + net.JoinHostPort(sb.IP, strconv.Itoa(borisPort))
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/init", strings.NewReader(`{"token":"`+sb.Token+`"}`))
		req.Header.Set("X-Sandbox-ID", sb.Name)
		req.Header.Set("Boris-Init", f.Bootstrap)
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				sb.Listening = time.Since(sb.Started)
				break
			}
			if resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusNotFound {
				return fmt.Errorf("%s: /init: %d %s", sb.Name, resp.StatusCode, body)
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: not ready: %v; stderr: %s", sb.Name, ctx.Err(), sb.stderr)
		}
		time.Sleep(2 * time.Millisecond) // polling a process's start, as a control plane does
	}
	c := f.Client(sb, "first")
	if _, isErr, err := c.Tool(ctx, "bash", map[string]any{"command": "true"}); err != nil || isErr {
		return fmt.Errorf("%s: first call: %v", sb.Name, err)
	}
	sb.FirstCall = time.Since(sb.Started)
	return nil
}

// Close stops every Boris and removes the namespaces and the bridge.
func (f *Fleet) Close() {
	if f.server != nil {
		_ = f.server.Close()
	}
	if f.router != nil {
		f.router.Close()
	}
	for _, sb := range f.Sandboxes {
		_ = f.Stop(sb, syscall.SIGTERM)
		_ = sh("ip", "netns", "del", sb.NetNS)
	}
	_ = sh("ip", "link", "del", f.bridge)
}

// RSS returns the resident memory of sb's Boris, in bytes.
func (sb *Sandbox) RSS() (int64, error) {
	if sb.Cmd == nil {
		return 0, errors.New("not running")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", sb.Cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// Client is a stateless MCP client (2026-07-28) of one sandbox, through the router, in
// one workspace.
type Client struct {
	router, sandbox, token, workspace string
	hc                                *http.Client
	next                              atomic.Int64
}

var transport = &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}

// Direct makes clients skip the router and call each Boris at its address.
var Direct bool

// Client returns a client of sb working in workspace.
func (f *Fleet) Client(sb *Sandbox, workspace string) *Client {
	if Direct {
		return &Client{router: "http://" + net.JoinHostPort(sb.IP, strconv.Itoa(borisPort)), sandbox: sb.Name, token: sb.Token, workspace: workspace, hc: &http.Client{Transport: transport}}
	}
	return &Client{router: f.RouterURL, sandbox: sb.Name, token: sb.Token, workspace: workspace, hc: &http.Client{Transport: transport}}
}

// Call sends one request and returns its result or its error.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "fleet", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next.Add(1), "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.router+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	name, _ := params["name"].(string)
	for k, v := range map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name,
		"X-Sandbox-ID": c.sandbox, "Boris-Token": c.token, "Boris-Workspace": c.workspace,
	} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if !Direct {
		req.Header.Set("Authorization", "Bearer router-credential") // the router's, which it removes
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body) // read to the end, so the connection is kept
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 4<<20)
	for lines.Scan() {
		data := strings.TrimPrefix(lines.Text(), "data: ")
		if !strings.HasPrefix(data, "{") {
			continue
		}
		var msg struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			return nil, err
		}
		if msg.Error != nil {
			return nil, errors.New(msg.Error.Message)
		}
		if msg.Result != nil {
			return msg.Result, nil
		}
	}
	return nil, fmt.Errorf("no response: %v", lines.Err())
}

// Tool calls a tool and returns its text.
func (c *Client) Tool(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	raw, err := c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", false, err
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError, nil
}

// CPU returns the processor time sb's Boris has used, and that of the commands it ran and
// reaped, from /proc/PID/stat.
func (sb *Sandbox) CPU() (self, children time.Duration, err error) {
	if sb.Cmd == nil {
		return 0, 0, errors.New("not running")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sb.Cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	tick := func(i int) time.Duration { // field i of stat, counted from 1
		n, _ := strconv.ParseInt(f[i-3], 10, 64)
		return time.Duration(n) * time.Second / 100 // USER_HZ
	}
	return tick(14) + tick(15), tick(16) + tick(17), nil
}
