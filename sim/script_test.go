package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/golden"
	"github.com/herdsweep/herdsweep/sim"
)

// TestScripts runs the scenario scripts of testdata/scripts: small worlds (a
// handful of clients, a few dozen ticks) set up by commands, each followed
// by what it prints, as etcd's raft and CockroachDB's allocator simulator
// keep theirs (their datadriven format). A script is documentation: read
// one to learn what the simulator does tick by tick.
//
// A script is a sequence of blocks, each a command line, a line "----" and
// the command's expected output up to a blank line. Lines starting with #
// and blank lines between blocks are comments. The commands:
//
//	scenario KEY=VALUE …  the world, in sweeps.toml's keys (sweep schema
//	                      lists them); keys not given are zero
//	policy SPEC           the clients' policy, in the policy-spec language
//	                      of sweeps.toml and recommend --mine
//	run [seed=N] [show=events|ticks]
//	                      simulates the scenario with the policy (seed 1
//	                      unless given) and prints each arrival (events) or
//	                      each tick's counts (ticks), then the run's metrics
//
// A run's event log has one line per arrival, in the order the simulator
// handles them (sim.Sim.Trace): the tick, the client, what happened, and
// for a client that will retry, the wait it drew (ms) and the tick it
// arrives at next ("-" past the horizon).
//
// go test ./sim -run TestScripts -update rewrites every expected output
// from what the simulator does now; review the diff like code. On a
// mismatch the script as it ran is written beside it (NAME.txt.got).
func TestScripts(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "scripts", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 5 {
		t.Fatalf("%d scripts in testdata/scripts, want the five that teach the simulator", len(paths))
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := runScript(path, string(src))
			if err != nil {
				t.Fatal(err)
			}
			golden.CheckString(t, path, got)
		})
	}
}

// runScript runs a script's commands and returns the script with each
// command's output as it is now. Its errors are the script's: a block
// without "----", an unknown command, a key or value the command refuses.
func runScript(path, src string) (string, error) {
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	var out strings.Builder
	var w world
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return "", fmt.Errorf("%s:%d: %q: want a line \"----\" after the command, then its output", path, i+1, line)
		}
		text, err := w.do(line)
		if err != nil {
			return "", fmt.Errorf("%s:%d: %s", path, i+1, err)
		}
		out.WriteString(line + "\n----\n" + text)
		// skip the expected output: up to a blank line or the end
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
		}
		if i < len(lines) {
			out.WriteString("\n")
		}
	}
	return out.String(), nil
}

// world is a script's state: the cell its commands set up.
type world struct {
	cell      grid.Cell
	scenario  bool // a scenario line came
	hasPolicy bool
}

// do runs one command line and returns its output, each line ended by a
// newline and none blank.
func (w *world) do(line string) (string, error) {
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch cmd {
	case "scenario":
		return w.setScenario(rest)
	case "policy":
		p, err := grid.ParsePolicy(rest)
		if err != nil {
			return "", fmt.Errorf("policy %q: %v", rest, err)
		}
		w.cell.Policy, w.hasPolicy = p, true
		return w.cell.PolicySpec() + "\n" + p.Plain() + "\n", nil
	case "run":
		return w.run(rest)
	}
	return "", fmt.Errorf("%q: want scenario, policy or run", cmd)
}

// setScenario sets the scenario from nothing: keys not given are zero.
func (w *world) setScenario(args string) (string, error) {
	w.cell.Scenario = sim.Scenario{}
	for _, kv := range strings.Fields(args) {
		k, v, ok := strings.Cut(kv, "=")
		p := grid.ParamByKey(k)
		switch {
		case !ok:
			return "", fmt.Errorf("scenario: %q: want key=value", kv)
		case p == nil || p.Policy:
			return "", fmt.Errorf("scenario: %q: want a scenario key of sweeps.toml (sweep schema lists them)", k)
		}
		val, err := parseValue(p, v)
		if err == nil {
			val, err = p.Coerce(val)
		}
		if err != nil {
			return "", fmt.Errorf("scenario: %s: %v", k, err)
		}
		p.Apply(&w.cell, val)
	}
	sc := w.cell.Scenario
	if err := sc.Validate(); err != nil {
		return "", fmt.Errorf("scenario: %v", err)
	}
	w.scenario = true
	tick := func(d time.Duration) int64 { return int64((d + sc.Tick - 1) / sc.Tick) }
	return fmt.Sprintf("%s server; a tick is %v; down until tick %d (%v); the run stops before tick %d (%v)\n",
		sc.Server(), sc.Tick, tick(sc.RecoverAt), sc.RecoverAt, tick(sc.Horizon), sc.Horizon), nil
}

// parseValue reads a script's value as p's type.
func parseValue(p *grid.Param, v string) (any, error) {
	switch p.Type {
	case grid.Int:
		return strconv.ParseInt(v, 10, 64)
	case grid.Float:
		return strconv.ParseFloat(v, 64)
	case grid.Bool:
		return strconv.ParseBool(v)
	}
	if u, err := strconv.Unquote(v); err == nil {
		return u, nil
	}
	return v, nil
}

// run simulates the world and prints its event log or tick counts, then
// its metrics.
func (w *world) run(args string) (string, error) {
	if !w.scenario || !w.hasPolicy {
		return "", fmt.Errorf("run: want a scenario and a policy before it")
	}
	seed, show := uint64(1), "events"
	for _, kv := range strings.Fields(args) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "seed":
			seed, err = strconv.ParseUint(v, 10, 32)
		case "show":
			show = v
			if v != "events" && v != "ticks" {
				err = fmt.Errorf("%q: want events or ticks", v)
			}
		default:
			err = fmt.Errorf("want seed=N or show=events|ticks")
		}
		if err != nil {
			return "", fmt.Errorf("run: %s: %v", kv, err)
		}
	}
	var log eventLog
	s := sim.Sim{Trace: log.add}
	r, err := w.cell.Simulate(&s, sim.NewMulberry32(uint32(seed)), nil)
	if err != nil {
		return "", fmt.Errorf("run: %v", err)
	}
	var b strings.Builder
	if show == "ticks" {
		log.writeTicks(&b)
	} else {
		log.writeEvents(&b)
	}
	writeMetrics(&b, w.cell.Scenario, r)
	return b.String(), nil
}

// eventLog keeps a run's events in the order the simulator reports them.
type eventLog []sim.Event

func (l *eventLog) add(e sim.Event) { *l = append(*l, e) }

// writeEvents writes one line per arrival.
func (l eventLog) writeEvents(b *strings.Builder) {
	b.WriteString("tick client outcome          wait_ms next_tick\n")
	for _, e := range l {
		if e.Served || e.GaveUp {
			fmt.Fprintf(b, "%4d %6d %s\n", e.Tick, e.Client, outcome(e))
			continue
		}
		next := "-"
		if e.NextTick >= 0 {
			next = strconv.Itoa(e.NextTick)
		}
		fmt.Fprintf(b, "%4d %6d %-16s %7.1f %9s\n", e.Tick, e.Client, outcome(e), e.Delay, next)
	}
}

// outcome says what happened to an arrival.
func outcome(e sim.Event) string {
	var what string
	switch {
	case e.Served:
		return "served"
	case e.Local:
		what = "refused locally" // by a client component, before it was sent
	case e.TimedOut:
		what = "timed out" // the client stopped waiting; the server still works on it
	case e.Failed:
		what = "failed (503)" // served, then failed by a brownout
	default:
		what = "rejected"
	}
	if e.GaveUp {
		what += ", gave up"
	}
	return what
}

// writeTicks writes one line per tick with arrivals: how many arrived and
// what became of them.
func (l eventLog) writeTicks(b *strings.Builder) {
	b.WriteString("tick arrivals served rejected gave_up\n")
	for i := 0; i < len(l); {
		k, n, served, gaveUp := l[i].Tick, 0, 0, 0
		for ; i < len(l) && l[i].Tick == k; i++ {
			n++
			if l[i].Served {
				served++
			}
			if l[i].GaveUp {
				gaveUp++
			}
		}
		fmt.Fprintf(b, "%4d %8d %6d %8d %7d\n", k, n, served, n-served, gaveUp)
	}
}

// writeMetrics writes the run's metrics that the script's world can move.
func writeMetrics(b *strings.Builder, sc sim.Scenario, r sim.Result) {
	fmt.Fprintf(b, "sent %d (%d after recovery), peak %d a tick; served %d, gave up %d, pending %d\n",
		r.Sent, r.SentAfterRecovery, r.PeakArrivals, r.Succeeded, r.GaveUp, r.Pending)
	fmt.Fprintf(b, "t50 %s, t99 %s, all done %s\n", milestone(r.T50), milestone(r.T99), milestone(r.AllDone))
	if r.LocalRejections > 0 {
		fmt.Fprintf(b, "refused locally %d\n", r.LocalRejections)
	}
	if sc.FailShare > 0 {
		fmt.Fprintf(b, "failed %d; success rate %.3f, load amplification %.3f\n", r.Failed, r.SuccessRate(), r.Amplification())
	}
	if sc.Server() == sim.QueueingServer {
		fmt.Fprintf(b, "goodput %d, timed out %d, rejected %d; workers busy %.0f ms, %.0f ms of it wasted (%.0f %%)\n",
			r.Goodput, r.TimedOut, r.Rejected, r.BusyMS, r.WastedMS, 100*r.WastedFraction())
	}
}

func milestone(m sim.Milestone) string {
	if !m.Reached {
		return "not reached"
	}
	return m.At.String()
}

// A script's mistakes are errors naming its line and what would be
// accepted, not a silent pass.
func TestScriptErrors(t *testing.T) {
	t.Parallel()
	const sc = "scenario clients=2 tick_ms=100 recover_s=1 capacity_rps=10 window_s=1\n----\n\n"
	tests := []struct {
		name, src, want string
	}{
		{"no separator", "policy fixed base_s=1\n\n", `x.txt:1: "policy fixed base_s=1": want a line "----"`},
		{"unknown command", "# a comment\nrunn\n----\n", `x.txt:2: "runn": want scenario, policy or run`},
		{"policy key in scenario", "scenario clients=2 base_s=1\n----\n", `x.txt:1: scenario: "base_s": want a scenario key`},
		{"unknown key", "scenario clients=2 capacity=3\n----\n", `x.txt:1: scenario: "capacity": want a scenario key`},
		{"bad value", "scenario clients=two\n----\n", `x.txt:1: scenario: clients: strconv.ParseInt`},
		{"invalid scenario", "scenario clients=0 tick_ms=100\n----\n", "x.txt:1: scenario: Clients: 0: want"},
		{"bad policy", sc + "policy fixed base_s=-1\n----\n", `x.txt:4: policy "fixed base_s=-1"`},
		{"run without policy", sc + "run\n----\n", "x.txt:4: run: want a scenario and a policy"},
		{"bad run option", sc + "policy fixed base_s=1\n----\n\nrun show=all\n----\n", `x.txt:7: run: show=all: "all": want events or ticks`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := runScript("x.txt", tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("runScript: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// runScript keeps everything but the outputs as it was, so that -update
// changes only what the simulator prints: a script whose outputs are
// already right comes back byte for byte.
func TestScriptRoundTrip(t *testing.T) {
	t.Parallel()
	src := "# comment\n\nscenario clients=1 tick_ms=100 recover_s=0 capacity_rps=10 window_s=1\n----\nstale\nlines\n\n# another\npolicy fixed base_s=1\n----\n"
	once, err := runScript("x.txt", src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(once, "# comment\n\nscenario") || !strings.Contains(once, "\n\n# another\npolicy fixed base_s=1\n----\nfixed base_s=1\n") || strings.Contains(once, "stale") {
		t.Errorf("runScript rewrote more than the outputs:\n%s", once)
	}
	twice, err := runScript("x.txt", once)
	if err != nil {
		t.Fatal(err)
	}
	if twice != once {
		t.Errorf("a script with right outputs changed when run again:\n%s\nthen\n%s", once, twice)
	}
}
