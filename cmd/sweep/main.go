// Command sweep is herdsweep's command line: it runs the sweeps of
// sweeps.toml into a Parquet dataset, reproduces the article's tables,
// recommends a retry policy for a capacity and renders plots and a report.
//
// Run `sweep help` for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go onSignals(sigs, cancel, os.Stderr, os.Exit)
	stop := cpuProfile(os.Getenv("HERDSWEEP_CPUPROFILE"), os.Stderr)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cancel()
	if err != nil {
		switch {
		case alreadyPrinted(err):
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(os.Stderr, "sweep:", interrupted(err))
		default:
			fmt.Fprintln(os.Stderr, "sweep:", err)
		}
		os.Exit(exitCode(err))
	}
}

// cpuProfile writes a CPU profile of the command to path (for `go tool
// pprof`) when path is not empty: HERDSWEEP_CPUPROFILE=FILE sweep … is how
// docs/performance.md's speed figures are taken apart. It returns what stops it.
func cpuProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sweep: HERDSWEEP_CPUPROFILE: %v (no profile)\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "sweep: HERDSWEEP_CPUPROFILE: %v\n", err)
		}
	}
}

// onSignals cancels the command on the first SIGINT or SIGTERM (it
// finishes the part in hand and exits 130) and exits 130 at once on the
// second.
func onSignals(sigs <-chan os.Signal, cancel func(), stderr io.Writer, exit func(int)) {
	s := <-sigs
	fmt.Fprintf(stderr, "sweep: %v: stopping after the part in hand; signal again to stop at once\n", s)
	cancel()
	s = <-sigs
	fmt.Fprintf(stderr, "sweep: %v again: exiting at once\n", s)
	exit(130)
}

// interrupted words a cancelled command's error without Go's error chain:
// what the command says it kept, or a general line.
func interrupted(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+context.Canceled.Error())
	if msg == context.Canceled.Error() {
		return "interrupted: what was finished is kept; run the same command again to go on"
	}
	return msg
}
