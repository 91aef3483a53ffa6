package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/config"
)

// TestSDKShutdownLoggedAtInfo: the SDK calls a server stopped by its context (SIGINT) an
// error; Boris logs it at info level, and not at all at warn.
func TestSDKShutdownLoggedAtInfo(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelDebug} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		sdk := sdkLogger(&config.Config{LogLevel: level}, log)
		sdk.Error(sdkShutdown, "error", context.Canceled)
		sdk.Error("something else broke")
		got := buf.String()
		if strings.Contains(got, "level=ERROR msg=\""+sdkShutdown) {
			t.Errorf("level %v: shutdown logged as an error: %s", level, got)
		}
		if want := level <= slog.LevelInfo; strings.Contains(got, "level=INFO msg=\""+sdkShutdown) != want {
			t.Errorf("level %v: shutdown at info logged: %v, want %v: %s", level, !want, want, got)
		}
		if !strings.Contains(got, "level=ERROR msg=\"something else broke\"") {
			t.Errorf("level %v: other SDK errors lost: %s", level, got)
		}
	}
}
