package main

import (
	"context"
	"syscall"
	"testing"
)

// TestNotifyContext: once signalsCaught returns, a signal is caught (not its default,
// which would end the test process) and cancels the context.
func TestNotifyContext(t *testing.T) {
	ctx, stop := notifyContext(context.Background(), syscall.SIGUSR2)
	defer stop()
	signalsCaught(ctx)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	stop()
	stop()                              // twice is fine
	signalsCaught(context.Background()) // a context without signals does not wait
}
