package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/herdsweep/herdsweep/internal/suggest"
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
	var r reported
	return errors.As(err, &u) && u.printed || errors.As(err, &r)
}

func exitCode(err error) int {
	var u usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	var st interface{ exitStatus() int } // a failure with a code of its own (sweep live's inconclusive: 3)
	if errors.As(err, &st) {
		return st.exitStatus()
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
		{"cells", "the per-cell view: one row per cell, each metric summarised over its seeds, in a Parquet file", cmdCells},
		{"diff", "compare two datasets table by table", cmdDiff},
		{"compare", "did anything move? two datasets cell by cell, with intervals; exit 1 on a change", cmdCompare},
		{"assert", "absolute checks a nightly job gates on (\"t99 max <= 60 where …\"); exit 1 when one fails", cmdAssert},
		{"check", "verify a dataset: duplicates, orphans, corrupt parts, leftovers", cmdCheck},
		{"live", "real retry libraries against a loopback server beside the simulator, in real time or (--virtual) on a fake clock at the article's scale", cmdLive},
		{"policies", "list the policy families with their formulas", cmdPolicies},
		{"schema", "document the dataset's columns", cmdSchema},
		{"version", "print the tool and simulator versions", cmdVersion},
		{"completion", "print a shell completion script (bash, zsh, fish)", cmdCompletion},
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
Exit codes: 0 done, 1 failed, 2 bad input, 3 inconclusive (live), 130 interrupted.
`)
}

// run is the whole program: main only adds the process around it. Its
// error is printable: a name from a file or a command line (a path, a
// flag, a key) never reaches the terminal with its control characters.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := runCommand(ctx, args, stdout, stderr); err != nil {
		return printableError{err}
	}
	return nil
}

// printableError is an error whose text is printable (printable).
type printableError struct{ error }

func (e printableError) Error() string { return printable(e.error.Error()) }
func (e printableError) Unwrap() error { return e.error }

// printable is s with every control character but newline and tab, every
// bidirectional control and every byte that is not UTF-8 written as a Go
// escape (\x1b, \u202e): it cannot move the cursor, ring the bell or
// reorder the line of the terminal that shows it.
func printable(s string) string {
	clean := true
	for _, c := range s {
		if c != '\n' && c != '\t' && (c == utf8.RuneError || unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case c == '\n' || c == '\t':
			b.WriteRune(c)
		case unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c) || c == utf8.RuneError:
			q := strconv.QuoteRuneToASCII(c) // '\x1b', '\a', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
			out := stderr
			if asksHelp(args[1:]) { // help is output: it goes to stdout, so that `sweep run -h | less` works
				out = stdout
			}
			err := c.run(ctx, args[1:], stdout, out)
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
	return usagef("unknown command %q%s: want one of %s", name, didYouMean(name, names), strings.Join(names, ", "))
}

func asksHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			return true
		}
	}
	return false
}

// newFlags returns a FlagSet whose -h prints the command's synopsis and
// options to w (stdout when help was asked for), and whose errors are
// reported by parseArgs in the user's words instead of the flag package's.
func newFlags(name, synopsis string, w io.Writer) *flag.FlagSet {
	return newFlagsDoc(name, synopsis, "", w)
}

// newFlagsDoc is newFlags with a description printed between the usage
// line and the options.
func newFlagsDoc(name, synopsis, doc string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sweep %s %s\n", name, synopsis)
		if doc != "" {
			fmt.Fprintf(fs.Output(), "\n%s", doc)
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(fs.Output(), "\nOptions:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args, with flags anywhere on the line, and refuses stray
// arguments.
func parse(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("%s: unexpected argument %q (the options start with --; see 'sweep %s -h')", fs.Name(), pos[0], fs.Name())
	}
	return nil
}

// parseArgs parses flags anywhere among the arguments (until "--") and
// returns the others in order. A mistake is reported in the user's words:
// the flag, what was wrong, a "did you mean" for a misspelt flag and a
// hint for a duration without its unit; -h prints the usage.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usageFn := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usageFn }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				usageFn()
				return nil, err
			}
			return nil, usageError{err: flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagError rewrites the flag package's error for a person.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return fmt.Errorf("%s: unknown option --%s%s; see 'sweep %s -h'", fs.Name(), name, didYouMean(name, names), fs.Name())
	}
	// invalid value "30" for flag -outage: parse error
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		val, after, _ := strings.Cut(rest, " for flag -")
		name, why, _ := strings.Cut(after, ": ")
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isDur := g.Get().(time.Duration); isDur {
					hint := "a duration with its unit, such as 30s, 10m or 1h30m"
					if v, err := strconv.Unquote(val); err == nil {
						if _, err := strconv.ParseFloat(v, 64); err == nil {
							hint = fmt.Sprintf("a duration with its unit: %ss or %sm", v, v)
						}
					}
					return fmt.Errorf("%s: --%s %s: want %s", fs.Name(), name, val, hint)
				}
			}
			want := why
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case int, int64, uint, uint64:
					want = "want a whole number"
				case float64:
					want = "want a number"
				case bool:
					want = "want true or false"
				}
			}
			return fmt.Errorf("%s: --%s %s: %s: %s", fs.Name(), name, val, want, f.Usage)
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("%s: --%s needs a value; see 'sweep %s -h'", fs.Name(), name, fs.Name())
	}
	return fmt.Errorf("%s: %v", fs.Name(), err)
}

// didYouMean returns ` (did you mean "x"?)` for the closest of names
// within two edits of s, else "" (suggest.DidYouMean).
func didYouMean(s string, names []string) string { return suggest.DidYouMean(s, names) }

// listFlag collects a repeatable, comma-separated option.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return errors.New("an empty value: want one or more, separated by commas") // --sweep "" named nothing and ran every sweep
		}
		*l = append(*l, p)
	}
	return nil
}

// checkFolderOut refuses, as the --out of a command that writes to a
// folder only, what checkOutDir refuses and a URL: a bucket would receive
// its files and this machine an empty folder named after the URL.
func checkFolderOut(cmd, out string) error {
	if err := checkOutDir(cmd, out); err != nil {
		return err
	}
	if scheme, _, ok := strings.Cut(out, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		return usagef("%s: --out %s: want a folder: %s writes its pages into a folder, not to %s://", cmd, out, cmd, scheme)
	}
	_, err := location(cmd, "--out", out) // a one-slash URL
	return err
}

// checkOutDir refuses an empty output folder: "" is no folder, and the
// files would go into the working directory's runs/, plots/ ….
func checkOutDir(cmd, out string) error {
	if strings.TrimSpace(out) == "" {
		return usagef("%s: --out %q: want a folder, e.g. --out out", cmd, out)
	}
	return nil
}
