package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// InitHeader carries the bootstrap secret (--init-token-file) that authorises POST /init.
const InitHeader = "Boris-Init"

// credential is the token /mcp requires, as its SHA-256: set at start (--token), or once
// by POST /init on a Boris started with --init-token-file, such as a warm pod that is
// claimed after it started. Nil while there is none.
type credential struct {
	sum atomic.Pointer[[32]byte]
}

// required reports whether requests must carry a token: there is one, or there will be.
func (s *Server) tokenRequired() bool { return s.cfg.Token != "" || s.cfg.InitToken != "" }

// claimFile is where the hash of a token set by /init is kept, so that a Boris started
// again on the same state directory (a sandbox resumed after a suspend) accepts it.
func (s *Server) claimFile() string {
	if s.cfg.StateDir == "" || !s.cfg.StateDirGiven {
		return ""
	}
	return filepath.Join(s.cfg.StateDir, stateSubdir, "claim")
}

// loadCredential sets the credential from --token, or from the claim an earlier Boris
// recorded.
func (s *Server) loadCredential() {
	if s.cfg.Token != "" {
		sum := sha256.Sum256([]byte(s.cfg.Token))
		s.cred.sum.Store(&sum)
		return
	}
	if s.cfg.InitToken == "" || s.claimFile() == "" {
		return
	}
	b, err := os.ReadFile(s.claimFile())
	if err != nil {
		return
	}
	var sum [32]byte
	if n, err := hex.Decode(sum[:], bytes.TrimSpace(b)); err != nil || n != len(sum) {
		s.log.Warn("ignoring an unreadable claim in the state directory", "file", s.claimFile())
		return
	}
	s.cred.sum.Store(&sum)
	s.log.Info("token restored from the claim in the state directory")
}

// initRequest is the body of POST /init.
type initRequest struct {
	Token string            `json:"token"`
	Env   map[string]string `json:"env,omitempty"`
}

// maxInitBody bounds POST /init's body.
const maxInitBody = 64 << 10

// init serves POST /init: the control plane hands a Boris started without a token (a warm
// pod) its token, and optionally environment variables for its commands, once. It must
// carry the bootstrap secret in [InitHeader] and come from another host than the sandbox
// itself. A second /init with the same token succeeds and changes nothing (a claimer
// retrying, or a sandbox resumed); with another token it gets 409: the sandbox was claimed
// by someone else, and the claimer should not use it.
func (s *Server) init(w http.ResponseWriter, r *http.Request) {
	if s.cfg.InitToken == "" {
		s.notFound(w, r)
		return
	}
	if s.closing.Load() {
		httpError(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	want := sha256.Sum256([]byte(s.cfg.InitToken))
	got := sha256.Sum256([]byte(r.Header.Get(InitHeader)))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		httpError(w, http.StatusUnauthorized, "missing or wrong "+InitHeader+" header: send the bootstrap secret of --init-token-file")
		return
	}
	if s.fromSandbox(r) {
		httpError(w, http.StatusForbidden, "/init is refused from the sandbox itself: only the control plane may set the token")
		return
	}
	var req initRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInitBody+1))
	if err != nil || len(body) > maxInitBody || json.Unmarshal(body, &req) != nil {
		httpError(w, http.StatusBadRequest, `send a JSON body {"token": "...", "env": {"NAME": "value"}} of at most 64 KiB`)
		return
	}
	req.Token = strings.TrimSpace(req.Token)
	if len(req.Token) < 16 || strings.ContainsAny(req.Token, " \t\r\n") {
		httpError(w, http.StatusBadRequest, "the token must be at least 16 characters, without white space")
		return
	}
	for k := range req.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.HasPrefix(k, "BORIS_") {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("environment variable name %q refused", k))
			return
		}
	}
	sum := sha256.Sum256([]byte(req.Token))
	if !s.cred.sum.CompareAndSwap(nil, &sum) {
		if cur := s.cred.sum.Load(); cur != nil && subtle.ConstantTimeCompare(cur[:], sum[:]) == 1 {
			w.WriteHeader(http.StatusNoContent) // the same claim again: nothing to do
			return
		}
		httpError(w, http.StatusConflict, "this sandbox already has a token: it was claimed by someone else; do not use it")
		return
	}
	s.setInitEnv(req.Env)
	if f := s.claimFile(); f != "" {
		if err := writeFileAtomic(f, []byte(hex.EncodeToString(sum[:])+"\n"), true); err != nil {
			s.log.Warn("cannot record the claim: a restarted Boris will need /init again", "err", err)
		}
	}
	s.log.Info("token set by /init", "env", len(req.Env))
	w.WriteHeader(http.StatusNoContent)
}

// setInitEnv adds env to what commands of workspaces and sessions opened from now on see.
func (s *Server) setInitEnv(env map[string]string) {
	if len(env) == 0 {
		return
	}
	s.envMu.Lock()
	defer s.envMu.Unlock()
	base := s.env
	out := make([]string, 0, len(base)+len(env))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); env[k] == "" {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	s.env = out
}

// commandEnviron is the environment new states start with.
func (s *Server) commandEnviron() []string {
	s.envMu.Lock()
	defer s.envMu.Unlock()
	return s.env
}

// fromSandbox is localPeer, but for tests, whose clients are all local.
func (s *Server) fromSandbox(r *http.Request) bool {
	if s.localPeer != nil {
		return s.localPeer(r)
	}
	return localPeer(r)
}

// localPeer reports whether r comes from this host: loopback, or one of its own addresses
// (a command in the sandbox connecting to the pod's address).
func localPeer(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// writeFileAtomic writes data to path through a temporary file in the same directory,
// made (mode 0700) if needed, and a rename; with sync, the data reaches the disk before
// the rename.
func writeFileAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
