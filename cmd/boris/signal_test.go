package main

import (
	"context"
	"syscall"
	"testing"
)

// TestNotifyContext: once catchSignals returns, a signal is caught (not its default,
// which would end the test process) and cancels the context.
func TestNotifyContext(t *testing.T) {
	ctx, stop := notifyContext(context.Background(), syscall.SIGUSR2)
	defer stop()
	catchSignals(ctx)
	catchSignals(ctx) // twice is fine
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	stop()
	stop()                             // twice is fine
	catchSignals(ctx)                  // after stop, nothing
	catchSignals(context.Background()) // a context without signals is left alone
}

// TestNotifyContextStopUncaught: stopping a context whose signals were never caught
// cancels it, and returns.
func TestNotifyContextStopUncaught(t *testing.T) {
	ctx, stop := notifyContext(context.Background(), syscall.SIGUSR2)
	stop()
	if ctx.Err() == nil {
		t.Error("the context is not cancelled after stop")
	}
}
