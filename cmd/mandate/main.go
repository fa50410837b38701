// Command mandate decides whether an AI agent's tool call should happen for
// the user's task. See `mandate --help` and the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mandate-dev/mandate/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
