package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/memlimit"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/shell"
)

func main() {
	if confine.IsLauncher() { // Boris started again to fork confined commands
		os.Exit(confine.RunLauncher())
	}
	keepDescriptors()
	// SIGHUP (the terminal closed, the ssh connection dropped) ends the server like
	// SIGTERM, with the same cleanup: every command it started is stopped.
	ctx, stop := notifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "boris:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "watch" {
		catchSignals(ctx)
		return runWatch(ctx, args[1:], getenv, stdout, stderr)
	}
	// A client that starts Boris without --transport (the usual way to register an MCP
	// server) talks on stdin and stdout: it is served there, never by an HTTP server that
	// outlives it, unless a flag only HTTP uses says otherwise.
	cfg, err := config.ParseStdin(args, getenv, buildVersion(), stdout, isPipe(stdin))
	if errors.Is(err, config.ErrVersion) {
		fmt.Fprintf(stdout, "%s\n%s\n", buildVersion(), confine.Describe())
		return nil
	}
	if errors.Is(err, config.ErrExit) {
		return nil
	}
	if err != nil {
		return err
	}
	// The token may point into the memory of the command line or environment, which is
	// overwritten: keep a copy.
	cfg.Token = strings.Clone(cfg.Token)
	hideSecrets(cfg.Token)
	_ = os.Unsetenv("BORIS_TOKEN")
	log := newLogger(&cfg, stderr)
	logTransport(ctx, log, &cfg)
	srv, err := server.New(&cfg, log, os.Environ())
	if err != nil {
		return err
	}
	if !cfg.NoBash {
		// The last word: whatever any command started and is still running ends with
		// the server, however it got away from its session.
		defer shell.StopAll(cfg.KillGrace)
	}
	warnToken(log, &cfg, args, getenv)

	// Catching the signals and setting the collector's memory limit matter once commands
	// run and calls fill the heap, not for the first replies. Over STDIO, where the client
	// waits for this process's start, they are done before the first tool call.
	settle := sync.OnceFunc(func() {
		tuneGC(getenv, os.ReadFile)
		catchSignals(ctx)
		if !cfg.NoBash {
			// What a Boris that was killed (by the OOM killer, say) left running ends now.
			shell.EndLeftovers()
			reserveThreads(reservedThreads)
		}
	})
	if cfg.Transport == "stdio" {
		srv.BeforeCalls(settle)
		return serveStdio(ctx, &cfg, srv, log, stdin, stdout, stderr)
	}
	settle()
	return serveHTTP(ctx, &cfg, srv, log, stderr)
}

// serveStdio serves the client on stdin and stdout, and the live view where --watch says.
func serveStdio(ctx context.Context, cfg *config.Config, srv *server.Server, log *slog.Logger, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	log.Info("serving on stdio", "version", cfg.Version, "workdir", cfg.Workdir, "landlock", confine.Describe())
	watchBase := ""
	if cfg.WatchAddr != "" && srv.Watch() != nil {
		ln, err := net.Listen("tcp", cfg.WatchAddr)
		if err != nil {
			return fmt.Errorf("--watch: listening on %s: %w", cfg.WatchAddr, err)
		}
		watchBase = baseURL(ln)
		log.Info("serving the live view", "url", watchBase+"/watch", "token_required", cfg.Token != "" || srv.WatchKey() != "")
		printWatchKey(stderr, srv, strings.TrimPrefix(watchBase, "http://"))
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			if err := srv.ServeWatch(wctx, ln); err != nil {
				log.Warn("live view stopped", "err", err)
			}
		}()
	}
	printToken(stderr, cfg, watchBase)
	err := srv.RunStdio(ctx, stdin, stdout)
	logStopped(ctx, log, "the client closed stdin", err)
	return err
}

// serveHTTP serves /mcp, /health and the live view on the configured address.
func serveHTTP(ctx context.Context, cfg *config.Config, srv *server.Server, log *slog.Logger, stderr io.Writer) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listening on %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	watchURL := "off (--no-watch)"
	if !cfg.NoWatch {
		watchURL = baseURL(ln) + "/watch"
	}
	printToken(stderr, cfg, baseURL(ln))
	printWatchKey(stderr, srv, strings.TrimPrefix(baseURL(ln), "http://"))
	log.Info("serving http", "url", baseURL(ln)+"/mcp", "watch", watchURL, "token_required", cfg.Token != "" || cfg.InitToken != "",
		"version", cfg.Version, "workdir", cfg.Workdir, "stateless_only", cfg.Stateless, "landlock", confine.Describe())
	err = srv.Serve(ctx, ln)
	logStopped(ctx, log, "the listener failed", err)
	return err
}

// logStopped logs why serving ended: a signal, else what ended it otherwise.
func logStopped(ctx context.Context, log *slog.Logger, otherwise string, err error) {
	reason := otherwise
	if ctx.Err() != nil {
		reason = "signal"
	}
	if err != nil {
		log.Info("stopped", "reason", reason, "err", err)
		return
	}
	log.Info("stopped", "reason", reason)
}

// logTransport says, first, which transport Boris chose and why, when the command line
// and the environment named none: at info level where that shows, else as a warning
// (STDIO logs only warnings by default).
func logTransport(ctx context.Context, log *slog.Logger, cfg *config.Config) {
	if cfg.TransportWhy == "" {
		return
	}
	level := slog.LevelInfo
	if !log.Enabled(ctx, level) {
		level = slog.LevelWarn
	}
	log.Log(ctx, level, "transport "+cfg.Transport, "why", cfg.TransportWhy)
}

// isPipe reports whether r is a pipe or a socket, as a client that starts Boris gives it.
func isPipe(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// baseURL is the address a person on this machine opens for the listener ln.
func baseURL(ln net.Listener) string {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return "http://" + ln.Addr().String()
	}
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// minTokenLength is the shortest token that does not draw a warning.
const minTokenLength = 16

// warnToken warns about a token that is easy to guess or to read: a short one, or one
// given on the command line, which every local user can list.
func warnToken(log *slog.Logger, cfg *config.Config, args []string, getenv func(string) string) {
	if cfg.Token == "" || cfg.TokenGenerated {
		return
	}
	if len(cfg.Token) < minTokenLength {
		log.Warn("the bearer token is short and easy to guess: use at least 16 random characters, such as the output of 'openssl rand -hex 32', or --generate-token", "length", len(cfg.Token))
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--token" || strings.HasPrefix(a, "--token=") {
			log.Warn("the bearer token was given with --token: any local user can read a command line; set BORIS_TOKEN or --token-file instead")
			return
		}
	}
}

// printToken prints a generated token once, straight to stderr and never through the
// logger, as lines a person can copy: the export that keeps it for a client, and the
// live view's address with it, when there is one (base is "" when there is none).
func printToken(stderr io.Writer, cfg *config.Config, base string) {
	if !cfg.TokenGenerated {
		return
	}
	fmt.Fprintf(stderr, "boris: generated a bearer token; clients send 'Authorization: Bearer <token>'. Keep it in your shell with:\n  export BORIS_TOKEN=%s\n", cfg.Token)
	if base != "" && !cfg.NoWatch {
		fmt.Fprintf(stderr, "boris: live view: %s/watch?token=%s\n", base, cfg.Token)
	}
}

// printWatchKey prints, once and straight to stderr (never through the logger), the
// address that opens the live view with the key it needs on a server without a token
// whose confined commands could reach it (see [server.Server.WatchKey]).
func printWatchKey(stderr io.Writer, srv *server.Server, addr string) {
	if key := srv.WatchKey(); key != "" {
		fmt.Fprintf(stderr, "boris: commands are confined but may connect to this port, so the live view needs a key: open http://%s/watch?token=%s (boris watch --token %s)\n", addr, key, key)
	}
}

// notifyContext is signal.NotifyContext, except that the signals are caught only from
// the first [catchSignals] on: os/signal starts two threads of its own, which took 0.5 to
// over 1 ms of a cold start on this 2-core host. Until then a signal has its default
// effect, ending the process at once, which is harmless while no command has started.
func notifyContext(parent context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	n := &notifier{sigs: sigs, cancel: cancel}
	return context.WithValue(ctx, signalsKey{}, n), n.stop
}

// signalsKey is the context key of a context's notifier.
type signalsKey struct{}

// notifier cancels a context from notifyContext on the first of its signals.
type notifier struct {
	sigs   []os.Signal
	cancel context.CancelFunc

	mu      sync.Mutex
	ch      chan os.Signal // nil until the signals are caught
	done    chan struct{}  // closed once the goroutine reading ch has ended
	stopped bool
}

// catchSignals catches the signals of a context from notifyContext, if they are not caught
// yet. A context without signals is left alone.
func catchSignals(ctx context.Context) {
	if n, ok := ctx.Value(signalsKey{}).(*notifier); ok {
		n.catch()
	}
}

func (n *notifier) catch() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil || n.stopped {
		return
	}
	n.ch, n.done = make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(n.ch, n.sigs...) // caught from its return on
	go func() {
		defer close(n.done)
		if _, ok := <-n.ch; ok {
			n.cancel() // later signals stay caught, and ignored, until stop
		}
	}()
}

// stop stops catching the signals and cancels the context. It is safe to call more than
// once.
func (n *notifier) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.stopped && n.ch != nil {
		signal.Stop(n.ch) // no signal reaches ch after this
		close(n.ch)
		<-n.done
	}
	n.stopped = true
	n.cancel()
}

// tuneGC sets a soft memory limit, unless GOGC or GOMEMLIMIT says otherwise, so that the
// collector works harder as the heap grows (a large file being edited, many sessions)
// rather than let it grow to the container's hard limit: the limit leaves room for 64 MiB
// of garbage (or half the container's memory if that is less) above the live heap, up to
// three quarters of the container's memory, and follows the live heap after each
// collection (see memlimit.Follow). The collector otherwise runs at Go's default,
// GOGC=100: at 200 a call that starts no process cost about a third less CPU, for about
// 4 MiB more resident memory (see docs/performance.md). Reading the container's limit
// from the cgroup files takes most of a millisecond, so it is done in the background.
func tuneGC(getenv func(string) string, readFile func(string) ([]byte, error)) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	go func() {
		room, ceiling := int64(64<<20), int64(0)
		if c := containerMemory(readFile); c > 0 {
			room, ceiling = min(room, c/2), c-c/4
		}
		memlimit.Follow(room, ceiling, nil)
	}()
}

// containerMemory returns the memory limit of this process's cgroup (v2, else v1), or 0
// when there is none.
func containerMemory(readFile func(string) ([]byte, error)) int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := readFile(f)
		if err != nil {
			continue
		}
		// "max" (v2) and a near-2^63 value (v1) both mean no limit.
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && n < 1<<50 {
			return n
		}
		return 0
	}
	return 0
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
