// Command sweep is herdsweep's command line: it runs the sweeps of
// sweeps.toml into a Parquet dataset, reproduces the article's tables,
// recommends a retry policy for a capacity and renders plots and a report.
//
// Run `sweep help` for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !alreadyPrinted(err) {
			fmt.Fprintln(os.Stderr, "sweep:", err)
		}
		os.Exit(exitCode(err))
	}
}
