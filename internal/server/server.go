package server

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/checkpoint"
	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/mcptask"
	"github.com/mjkoo/boris/internal/pathscope"
	"github.com/mjkoo/boris/internal/search"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
	"github.com/mjkoo/boris/internal/tools"
	"github.com/mjkoo/boris/internal/watch"
)

// Server is one Boris instance: the MCP server and its configuration, serving the client
// sessions its pool holds and the workspaces of stateless requests.
type Server struct {
	cfg    *config.Config
	log    *slog.Logger
	scope  *pathscope.Resolver
	policy *confine.Policy
	env    []string
	mcp    *mcp.Server
	hub    *watch.Hub // the live view's events; nil with --no-watch
	// watchKey is what the live view asks for when the server has no token (see WatchKey).
	watchKey string

	pool       *sessionPool // each session's state; sessionful HTTP admission and eviction
	workspaces *workspaces  // the state of stateless requests
	state      *stateStore  // what outlives a restart of the workspaces (--state-dir)
	posts      postRegistry // HTTP POSTs being served

	beforeCalls func() // see BeforeCalls

	checkpoints *checkpoint.Tracker // nil with checkpoints off
	indexes     *search.Indexes     // grep's indexes; nil with --no-search-index

	tasks *mcptask.Registry // MCP tasks; nil with --no-bash

	closing  atomic.Bool // set when shutdown starts: /health answers 503
	saveOnce sync.Once   // Close saves the workspaces once
	cred     credential  // the token /mcp requires
	envMu    sync.Mutex  // guards env, which POST /init may extend

	localPeer func(*http.Request) bool // tests: replaces the check that /init is not local
}

// New builds a Server. environ is the environment commands inherit; Boris's own secrets
// are removed from it.
func New(cfg *config.Config, log *slog.Logger, environ []string) (*Server, error) {
	if err := tools.Check(cfg); err != nil {
		return nil, err
	}
	scope, err := pathscope.New(cfg.Workdir, cfg.AllowDirs, cfg.DenyDirs)
	if err != nil {
		return nil, err
	}
	policy, err := confinement(cfg, scope, environ)
	if err != nil {
		return nil, err
	}
	logConfinement(log, cfg, policy)
	if !cfg.NoBash {
		// Commands' orphans come back to Boris to be reaped rather than linger as zombies.
		if err := shell.AdoptOrphans(); err != nil {
			log.Warn("cannot reap orphaned processes", "err", err)
		}
		shell.LimitProcesses(cfg.MaxProcesses)
	}
	s := &Server{
		cfg:    cfg,
		log:    log,
		scope:  scope,
		policy: policy,
		env:    commandEnv(environ, cfg.Token),
	}
	if !cfg.NoSearchIndex {
		s.indexes = &search.Indexes{Dir: cfg.CacheDir, OnReady: s.indexReady}
	}
	s.checkpoints = s.openCheckpoints()
	s.pool = newSessionPool(poolOptions{
		log: log, max: cfg.MaxSessions, newState: s.newState, ended: s.publishSessionEnd,
		opened: func(st *session.Session, c *mcp.Implementation) { s.publishSession(st, cfg.Transport, c) },
		live:   s.liveIDs,
	})
	keep := ""
	if cfg.StateDirGiven {
		keep = cfg.StateDir
	}
	s.state = loadState(keep, cfg.MaxSessions, log)
	s.workspaces = newWorkspaces(workspaceOptions{
		log: log, max: cfg.MaxSessions, idle: cfg.SessionIdleTimeout, newState: s.newState, ended: s.publishSessionEnd,
		opened:  func(st *session.Session, c *mcp.Implementation) { s.publishSession(st, "http (stateless)", c) },
		restore: s.restoreWorkspace,
		changed: s.saveWorkspace,
		forget:  s.state.forget,
	})
	s.loadCredential()
	s.startMCP()
	return s, nil
}

// liveIDs yields the ids of the protocol sessions the MCP server still has.
func (s *Server) liveIDs(yield func(string) bool) {
	for ss := range s.mcp.Sessions() {
		if !yield(ss.ID()) {
			return
		}
	}
}

// startMCP makes the MCP server, with its middleware, and has the tools registered.
func (s *Server) startMCP() {
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "boris", Title: "Boris", Version: s.cfg.Version}, &mcp.ServerOptions{
		Instructions: tools.Instructions(s.cfg, s.scope, s.policy),
		// The tools never change while the server runs: listChanged is false, and adding
		// them sends no notification to a client that is already connected. Logging is
		// what the SDK offers by default, for clients of protocols before 2026-07-28.
		//lint:ignore SA1019 kept for those clients, as the SDK's default keeps it
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}},
		Logger:       sdkLogger(s.cfg, s.log),
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			if req.Session.ID() != "" {
				_, _ = s.session(req.Session) // start tracking at once, so idle reaping frees it
			}
		},
	})
	// Registering the tools takes a few milliseconds at a cold start, about as long as
	// starting the transport and answering the client's initialize, so it is done beside
	// them; tool calls and lists wait for it (toolsWait), and nothing else needs it.
	registered := make(chan struct{})
	go func() {
		tools.Register(s.mcp, tools.Deps{Config: s.cfg, Session: s.session, Logger: s.log, Confine: s.policy, Checkpoints: s.checkpoints, Indexes: s.indexes})
		close(registered)
	}()
	s.mcp.AddReceivingMiddleware(s.toolsWait(registered))
	// Each middleware added wraps those before it. httpCalls goes last, outermost: a
	// stateless call is bound to its workspace before the live view and audit look up
	// its state, or each would get a state of its own.
	s.mcp.AddReceivingMiddleware(s.audit)
	s.startWatch()
	s.startTasks()
	s.mcp.AddReceivingMiddleware(plainErrors)
	s.mcp.AddReceivingMiddleware(s.httpCalls)
}

// plainErrors sends a tool's error result without its _meta, once the audit log and the
// live view have read its code there: the code also starts the text, and some clients
// (Gemini CLI, Qwen Code, cline) show the model an error result as its raw JSON, where
// _meta is noise.
func plainErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			r.Meta = nil
		}
		return res, err
	}
}

// BeforeCalls has every tool call wait for ready to return first; ready is called for
// each call, so it must be quick once it has returned. main passes what starts catching
// the termination signals, over STDIO, so that no command starts before a signal would
// stop it, while the first replies do not wait for it. Call it before serving.
func (s *Server) BeforeCalls(ready func()) { s.beforeCalls = ready }

// toolsWait holds requests about tools until registered is closed, and tool calls until
// beforeCalls has returned.
func (s *Server) toolsWait(registered <-chan struct{}) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "tools/") {
				select {
				case <-registered:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if method == "tools/call" && s.beforeCalls != nil {
				s.beforeCalls()
			}
			return next(ctx, method, req)
		}
	}
}

// confinement decides how commands are confined: to scope's roots, with the toolchains
// that environ names.
func confinement(cfg *config.Config, scope *pathscope.Resolver, environ []string) (*confine.Policy, error) {
	mode := cfg.ConfineBash
	if cfg.NoBash {
		mode = confine.Off // no commands to confine
	}
	return confine.New(confine.Options{
		Mode:    mode,
		Dirs:    scope.Roots(),
		Write:   cfg.ConfineWrite,
		Read:    cfg.ConfineRead,
		Network: cfg.ConfineNetwork && !cfg.NoBash,
		MaxABI:  cfg.LandlockABI,
		Getenv:  envLookup(environ),
	})
}

// Confinement returns how commands are confined.
func (s *Server) Confinement() *confine.Policy { return s.policy }

// MCP returns the underlying MCP server, for in-process transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// session returns the state for ss: the workspace a stateless request is bound to, or the
// session's own, created on first use, closed (its processes killed) when ss ends.
func (s *Server) session(ss *mcp.ServerSession) (*session.Session, error) {
	if st, ok := s.workspaces.stateOf(ss); ok {
		return st, nil
	}
	return s.pool.state(ss)
}

// newState returns fresh client state with the given id.
func (s *Server) newState(id string) *session.Session {
	return session.New(session.Options{
		ID:      id,
		Workdir: s.cfg.Workdir,
		Scope:   s.scope,
		Env:     s.commandEnviron(),
		Tasks:   tasks.Limits{MaxRunning: s.cfg.MaxBackgroundTasks, Lifetime: s.cfg.BackgroundTaskLimit, Grace: s.cfg.KillGrace, Drain: s.cfg.OutputDrain},
		Confine: s.policy,
	})
}

// Close ends every client session, killing their processes, and waits until they are
// freed. It is safe to call more than once.
func (s *Server) Close() {
	s.closing.Store(true)
	s.pool.close()
	s.workspaces.close()
	// What a Boris started again on the same state directory should know, tasks still
	// running included, is written before they are stopped, by the first Close only.
	s.saveOnce.Do(func() {
		for key, st := range s.workspaces.keyed() {
			if err := s.state.save(key, st, s.commandEnviron(), true); err != nil {
				s.log.Warn("cannot save the workspace for a restart", "workspace", st.ID, "err", err)
			}
		}
	})
	// Kill processes first so in-flight calls return, then close the protocol sessions.
	s.closeStates()
	if s.hub != nil {
		s.hub.Close() // watchers' streams end, so shutdown does not wait for them
	}
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	s.pool.wait()
	s.workspaces.wait()
	if s.checkpoints != nil {
		_ = s.checkpoints.Close()
	}
	s.indexes.Close() // stops following file events; a build under way ends on its own
}

// closeState closes the state of the session with the given id, killing its processes.
func (s *Server) closeState(id string) {
	if st := s.pool.stateOf(id); st != nil {
		_ = st.Close()
	}
}

// closeStates closes every session's and workspace's state, killing its processes.
func (s *Server) closeStates() {
	for _, st := range append(s.pool.all(), s.workspaces.all()...) {
		_ = st.Close()
	}
}

// logConfinement says at startup how commands are confined, and warns when --allow-dir
// cannot hold for them.
func logConfinement(log *slog.Logger, cfg *config.Config, p *confine.Policy) {
	if cfg.NoBash {
		return
	}
	switch {
	case p.Confined():
		log.Info("commands confined", "landlock_abi", p.ABI(), "rules", p.String())
	case len(cfg.AllowDirs) > 0 && cfg.ConfineBash != confine.Off:
		log.Warn("commands not confined to the allowed directories", "reason", p.Why())
	}
	if cfg.InitTokenFile != "" && p.CanRead(cfg.InitTokenFile) {
		log.Warn("confined commands can read the bootstrap secret of --init-token-file: keep it outside the directories they may read", "init_token_file", cfg.InitTokenFile)
	}
	if cfg.TokenFile != "" && p.CanRead(cfg.TokenFile) {
		log.Warn("confined commands can read the token file, and with it act as any client: keep it outside the directories they may read (the allowed directories, /etc and the other system directories; see the startup rules), for example in a directory of its own under the home directory of a user that runs only Boris",
			"token_file", cfg.TokenFile)
	}
	if !p.Paths() && (len(cfg.ConfineRead) > 0 || len(cfg.ConfineWrite) > 0) {
		log.Warn("--confine-read and --confine-write have no effect: commands are not confined to paths", "reason", p.Why())
	}
}

// envLookup returns a getenv that reads environ.
func envLookup(environ []string) func(string) string {
	return func(key string) string {
		for _, kv := range slices.Backward(environ) {
			if k, v, ok := strings.Cut(kv, "="); ok && k == key {
				return v
			}
		}
		return ""
	}
}

// commandEnv is the environment commands start with: Boris's own, without its secrets,
// and with defaults for running without a terminal where it sets none.
func commandEnv(environ []string, token string) []string {
	out := make([]string, 0, len(environ)+len(noTerminal))
	set := map[string]bool{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if k == "BORIS_TOKEN" || (token != "" && strings.Contains(v, token)) {
			continue
		}
		set[k] = true
		out = append(out, kv)
	}
	for _, kv := range noTerminal {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	return out
}

// noTerminal keeps git from waiting for someone at a terminal: an editor for a commit
// message (git commit without -m fails at once instead), or a password prompt.
var noTerminal = []string{"GIT_EDITOR=true", "GIT_TERMINAL_PROMPT=0"}

// sdkLogger passes the SDK's own messages on only from warnings up, unless debugging: its
// per-connection info lines would drown the audit log.
func sdkLogger(cfg *config.Config, log *slog.Logger) *slog.Logger {
	min := slog.LevelWarn
	if cfg.LogLevel <= slog.LevelDebug {
		min = slog.LevelDebug
	}
	return slog.New(floor{Handler: log.Handler(), min: min}).With("component", "mcp")
}

// sdkShutdown is the SDK's message when the server stops because its context ended, as
// on SIGINT: a normal shutdown, logged at info level rather than as the error the SDK
// calls it.
const sdkShutdown = "server run cancelled"

func (f floor) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && r.Message == sdkShutdown {
		r.Level = slog.LevelInfo
		if !f.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return f.Handler.Handle(ctx, r)
}

// floor is a slog.Handler under the SDK's logger that drops records below min, so that
// the SDK's per-connection lines stay out of the log unless debugging.
type floor struct {
	slog.Handler
	min slog.Level
}

func (f floor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f floor) WithAttrs(a []slog.Attr) slog.Handler {
	return floor{Handler: f.Handler.WithAttrs(a), min: f.min}
}

func (f floor) WithGroup(name string) slog.Handler {
	return floor{Handler: f.Handler.WithGroup(name), min: f.min}
}
