package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// usageError is bad input: exit code 2. printed: the flag package has
// already said it.
type usageError struct {
	err     error
	printed bool
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{err: fmt.Errorf(format, args...)}
}

// alreadyPrinted reports whether err was printed where it happened.
func alreadyPrinted(err error) bool {
	var u usageError
	return errors.As(err, &u) && u.printed
}

// errHelp is returned after printing help on request: exit code 0.
var errHelp = errors.New("help")

func exitCode(err error) int {
	var u usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &u), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "run sweeps into a Parquet dataset, then render plots and the report", cmdRun},
		{"plan", "count a sweep's cells and runs and estimate its time", cmdPlan},
		{"reproduce", "run the article's tables and compare them, row by row, with its figures", cmdReproduce},
		{"recommend", "pick a retry policy for a capacity", cmdRecommend},
		{"report", "render plots and report.md from an existing dataset", cmdReport},
		{"diff", "compare two datasets run by run", cmdDiff},
		{"live", "real clients of real retry libraries against a loopback server, beside the simulator", cmdLive},
		{"policies", "list the policy families with their formulas", cmdPolicies},
		{"schema", "document the dataset's columns", cmdSchema},
		{"version", "print the tool and simulator versions", cmdVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `sweep — which retry policy brings every client back fastest after an outage
without burying the server that just recovered?

Usage: sweep <command> [options]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run "sweep <command> -h" for a command's options. The main job:
  sweep run                  the default sweep of sweeps.toml into out/
Exit codes: 0 done, 1 failed, 2 bad input, 130 interrupted.
`)
}

// run is the whole program: main only adds the process around it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return usagef("no command given")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, args[1:], stdout, stderr)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return usagef("unknown command %q: want one of %s", name, strings.Join(names, ", "))
}

// newFlags returns a FlagSet that prints its usage to stderr and reports
// errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: sweep %s %s\n\nOptions:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, turning flag errors into usage errors and refusing
// stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// listFlag collects a repeatable, comma-separated option.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}
