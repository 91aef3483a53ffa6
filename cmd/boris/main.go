// Command boris is an MCP server that gives AI agents a shell, file viewing and editing,
// and search, over STDIO or streamable HTTP.
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
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
)

// version is set at release build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	tuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "boris:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	cfg, err := config.Parse(args, getenv, buildVersion(), stdout)
	if errors.Is(err, config.ErrExit) {
		return nil
	}
	if err != nil {
		return err
	}
	log := newLogger(&cfg, stderr)
	srv, err := server.New(&cfg, log, os.Environ())
	if err != nil {
		return err
	}
	if cfg.TokenGenerated {
		// Printed once, straight to stderr, never through the logger.
		fmt.Fprintf(stderr, "boris: generated bearer token (send 'Authorization: Bearer <token>'): %s\n", cfg.Token)
	}

	if cfg.Transport == "stdio" {
		log.Info("serving on stdio", "version", cfg.Version, "workdir", cfg.Workdir)
		return srv.RunStdio(ctx, stdin, stdout)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listening on %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	log.Info("serving http", "url", "http://"+ln.Addr().String()+"/mcp", "version", cfg.Version,
		"workdir", cfg.Workdir, "auth", cfg.Token != "")
	return srv.Serve(ctx, ln)
}

// tuneGC collects garbage less often than Go's default, unless GOGC or GOMEMLIMIT says
// otherwise. Boris's live heap is small, and each protocol message leaves tens of kB of
// decoding buffers behind, so at the default the collector runs every few calls: 400
// cuts the CPU a `bash true` call costs by about a sixth. The soft limit brings the
// default back as the heap nears it.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(512 << 20)
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
