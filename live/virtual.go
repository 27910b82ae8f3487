package live

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A Bubble runs f in a synctest bubble, whose goroutines keep the bubble's
// fake clock: it jumps ahead whenever every one of them is blocked on the
// others. It returns once f and every goroutine f started have returned.
type Bubble func(f func()) error

// InTest makes t's bubbles (synctest.Test).
func InTest(t *testing.T) Bubble {
	return func(f func()) error {
		synctest.Test(t, func(*testing.T) { f() })
		return nil
	}
}

// InProcess runs body with bubbles made as go test makes them: a bubble
// needs a *testing.T, and in a program that is not a test
// testing.MainStart gives it one, running body as the program's only test
// (what go test prints, PASS or a deadlocked bubble's trace, goes
// nowhere). Inside a test binary, where go test has parsed its flags,
// testing.RunTests runs body as a test of its own, with -test.run and
// -test.skip set aside meanwhile. Body's error, and a bubble that
// deadlocked, come back as the error.
//
// testing.MainStart and RunTests are meant for go test and may change
// between Go releases; go.mod pins the release this is built with, and the
// command's tests run both paths.
func InProcess(body func(Bubble) error) error {
	processMu.Lock()
	defer processMu.Unlock()
	var bodyErr error
	ran := false
	tests := []testing.InternalTest{{Name: "virtual", F: func(t *testing.T) {
		if ran { // -test.count, should anyone set it
			return
		}
		ran = true
		bodyErr = body(InTest(t))
	}}}
	var ok bool
	if flag.Parsed() && !processParsed {
		ok = runInTest(tests)
	} else {
		var err error
		if ok, err = runAsMain(tests); err != nil {
			return err
		}
	}
	switch {
	case bodyErr != nil:
		return bodyErr
	case !ok || !ran:
		return errors.New("live: a virtual run's goroutines deadlocked (a harness fault: every goroutine blocked with no timer to wait for)")
	}
	return nil
}

// runAsMain runs tests as a test binary's main does, its output discarded.
func runAsMain(tests []testing.InternalTest) (bool, error) {
	m := testing.MainStart(mainDeps{}, tests, nil, nil, nil)
	if !flag.Parsed() { // M.Run reads the testing flags as they are: their defaults
		if err := flag.CommandLine.Parse(nil); err != nil {
			return false, err
		}
		processParsed = true
	}
	stdout := os.Stdout
	null, err := os.Open(os.DevNull)
	if err != nil {
		return false, err
	}
	defer null.Close()
	os.Stdout = null
	code := m.Run()
	os.Stdout = stdout
	return code == 0, nil
}

// runInTest runs tests inside a running test binary (testing.RunTests),
// with the binary's -test.run and -test.skip set aside, which would
// otherwise choose whether they run.
func runInTest(tests []testing.InternalTest) bool {
	var saved []func()
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil {
			old := f.Value.String()
			f.Value.Set("")
			saved = append(saved, func() { f.Value.Set(old) })
		}
	}
	defer func() {
		for _, restore := range saved {
			restore()
		}
	}()
	return testing.RunTests(func(string, string) (bool, error) { return true, nil }, tests)
}

var (
	processMu     sync.Mutex
	processParsed bool // InProcess parsed the (empty) command line
)

// mainDeps is what testing.MainStart asks of go test's generated main,
// for a program that runs tests and nothing else: no profiles, no
// coverage, no fuzzing.
type mainDeps struct{}

// fuzzEntry is testing's corpus entry type (an alias of this struct).
type fuzzEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

func (mainDeps) ImportPath() string                                     { return "" }
func (mainDeps) ModulePath() string                                     { return "" }
func (mainDeps) MatchString(pat, str string) (bool, error)              { return true, nil }
func (mainDeps) SetPanicOnExit0(bool)                                   {}
func (mainDeps) StartCPUProfile(io.Writer) error                        { return errNoProfiles }
func (mainDeps) StopCPUProfile()                                        {}
func (mainDeps) StartTestLog(io.Writer)                                 {}
func (mainDeps) StopTestLog() error                                     { return nil }
func (mainDeps) WriteProfileTo(string, io.Writer, int) error            { return errNoProfiles }
func (mainDeps) RunFuzzWorker(func(fuzzEntry) error) error              { return errNoFuzzing }
func (mainDeps) ReadCorpus(string, []reflect.Type) ([]fuzzEntry, error) { return nil, errNoFuzzing }
func (mainDeps) CheckCorpus([]any, []reflect.Type) error                { return errNoFuzzing }
func (mainDeps) ResetCoverage()                                         {}
func (mainDeps) SnapshotCoverage()                                      {}
func (mainDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []fuzzEntry, []reflect.Type, string, string) error {
	return errNoFuzzing
}
func (mainDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}

var (
	errNoProfiles = errors.New("live: no profiles in virtual runs")
	errNoFuzzing  = errors.New("live: no fuzzing in virtual runs")
)

// RunVirtual runs cfg on virtual time, in a bubble b makes, on an
// in-memory network: the server, the clients and their libraries keep the
// bubble's clock, so a 30 s outage takes no 30 s, and the machine's load
// cannot move a request to another tick. A request takes no time on the
// network; a tick closes once every request sent by its end (k·tick) has
// reached the server, so a request sent exactly at a tick's end counts in
// that tick, as sim counts it. cfg's Grace must be 0 and its Scale 1; its
// Clock is ignored.
func RunVirtual(b Bubble, cfg Config) (*Measurement, error) {
	cfg.virtual, cfg.Clock = true, nil
	if err := cfg.Validate(0); err != nil {
		return nil, err
	}
	var m *Measurement
	var err error
	if berr := b(func() { m, err = Run(context.Background(), cfg) }); berr != nil {
		return nil, berr
	}
	if err == nil && m == nil {
		err = fmt.Errorf("live: the virtual run of %s ended without a measurement", cfg.Driver.Name)
	}
	return m, err
}

// ValidateVirtual checks cfg as RunVirtual runs it.
func (c Config) ValidateVirtual() error {
	c.virtual, c.Clock = true, nil
	return c.Validate(0)
}

// RunsVirtual runs cfg once per seed (each its own bubble, each its first
// send times from its seed), telling progress before each run. It stops
// before the next run once ctx is done (a bubble cannot wait on a context
// from outside it), with ctx's error.
func RunsVirtual(ctx context.Context, b Bubble, cfg Config, seeds []uint32, progress func(i int)) ([]*Measurement, error) {
	ms := make([]*Measurement, 0, len(seeds))
	for i, seed := range seeds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(i)
		}
		cfg.Seed = seed
		m, err := RunVirtual(b, cfg)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// GridScenario is one scenario of the virtual grid.
type GridScenario struct {
	Name     string
	Scenario sim.Scenario
	Down     DownMode
}

// VirtualGrid is the scenarios `sweep live --virtual --grid` runs every
// library over: the article's (2,000 clients, 30 s outage, 120
// requests/s), and it with one thing changed at a time: capacity 60 and
// 960 requests/s, outages of 10 s and 10 min, a Retry-After of 5 s, and
// connections refused during the outage; and sim's queueing server
// through a 5 s outage (12 workers, exponential service of 100 ms mean:
// 120 requests/s; clients stop waiting after 2 s). Each run's rejections
// are 503s while the server is down and 429s once it is up and over
// capacity, as in sim.
func VirtualGrid() []GridScenario {
	a := sim.Article()
	with := func(f func(*sim.Scenario)) sim.Scenario { sc := a; f(&sc); return sc }
	return []GridScenario{
		{"article", a, Down503},
		{"capacity 60/s", with(func(s *sim.Scenario) { s.Capacity = 60 }), Down503},
		{"capacity 960/s", with(func(s *sim.Scenario) { s.Capacity = 960 }), Down503},
		{"outage 10 s", with(func(s *sim.Scenario) { s.RecoverAt = 10 * time.Second }), Down503},
		{"outage 10 min", with(func(s *sim.Scenario) { s.RecoverAt = 10 * time.Minute; s.Horizon = 30 * time.Minute }), Down503},
		{"Retry-After 5 s", with(func(s *sim.Scenario) { s.RetryAfter = 5 * time.Second }), Down503},
		{"refused while down", a, DownRefused},
		{"queueing, 2 s timeout", with(func(s *sim.Scenario) {
			s.RecoverAt, s.Concurrency, s.Service, s.ServiceTime, s.Timeout = 5*time.Second, 12, "exponential", 100*time.Millisecond, 2*time.Second
		}), Down503},
	}
}
