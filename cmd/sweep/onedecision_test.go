package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
)

// One decision, two views: every cell of the report's Use table that is
// not marked "best of N measured" is what `sweep recommend --server`
// answers for its scenario over the same dataset, and a scenario whose
// sweep measured only some policies is marked.
func TestReportUseIsRecommendsAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(`[defaults]
clients = 300
recover_s = 10
window_s = 600
capacity_rps = [40, 80]
[sweep.candidates]
candidates = true
seeds = {from = 1, to = 40}
[sweep.two]
policy = ["decorrelated", "full-jitter"]
capacity_rps = 120
seeds = {from = 1, to = 10}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", cfg, "--out", res, "--quiet", "--no-report")
	rep := filepath.Join(dir, "rep")
	mustRun(t, "report", "--results", res, "--out", rep)
	md, err := os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	letters := map[string]string{} // letter → the policy in words
	for _, m := range regexp.MustCompile(`(?m)^- \*\*([A-Z]+)\*\* \([^)]*\): (.*)$`).FindAllStringSubmatch(string(md), -1) {
		letters[m[1]] = m[2]
	}
	row := regexp.MustCompile(`(?m)^\| ([^|]*) \|(.*)\|$`)
	cellRE := regexp.MustCompile(`\[(best of ([0-9]+) measured: )?\*\*([A-Z]+)\*\*.*?\]\(scenarios/c([0-9]+)-`)
	recommended, measured := 0, 0
	for _, r := range row.FindAllStringSubmatch(string(md), -1) {
		for _, c := range cellRE.FindAllStringSubmatch(r[2], -1) {
			capacity := c[4]
			if c[1] != "" {
				measured++
				if capacity != "120" || c[2] != "2" {
					t.Errorf("capacity %s: marked best of %s measured", capacity, c[2])
				}
				continue
			}
			recommended++
			out := mustRun(t, "recommend", "--json", "--server", "free", "--results", res, "--capacity", capacity, "--clients", "300", "--outage", "10s", "--window", "10m")
			var doc struct {
				Use struct {
					Policy struct {
						Plain string `json:"plain"`
					} `json:"policy"`
				} `json:"use"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if got := letters[c[3]]; got != doc.Use.Policy.Plain {
				t.Errorf("capacity %s: the report uses %s, recommend answers %s", capacity, got, doc.Use.Policy.Plain)
			}
			if !regexp.MustCompile(`[1-9][0-9]* reused from the dataset`).MatchString(out) {
				t.Errorf("capacity %s: recommend read none of its runs from the dataset", capacity)
			}
		}
	}
	if recommended != 2 || measured != 1 {
		t.Errorf("%d cells recommend's answer and %d best of measured; want 2 and 1:\n%s", recommended, measured, md)
	}
}

// The owner's view promises what a sweep reproduces: on a queueing server
// where the retrying fleet stays stuck, it names a wait bound or shedding,
// and the sweep it prints, run as it is, brings each policy back at the
// time the view says, seed for seed.
func TestOwnerSweepReproducesItsPromise(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := mustRun(t, "recommend", "--json", "--capacity", "200", "--clients", "500", "--outage", "1m",
		"--server", "concurrency=4 service=exponential service_s=0.02 timeout_s=2 arrival_rps=140")
	var doc struct {
		Owner struct {
			Fleet   []string `json:"fleet"`
			Options []struct {
				Option string `json:"option"`
				Keys   string `json:"sweeps_toml"`
				Fleet  []struct {
					Recovers bool     `json:"recovers"`
					Time     *float64 `json:"time_after_s"`
				} `json:"fleet"`
			} `json:"options"`
			Best  *string `json:"best"`
			Sweep string  `json:"sweep"`
		} `json:"owner"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	o := doc.Owner
	if o.Best == nil || !regexp.MustCompile(`wait over|shed`).MatchString(*o.Best) {
		t.Fatalf("the owner's view names %v, not a wait bound or shedding:\n%s", o.Best, out)
	}
	var best int
	for i, opt := range o.Options {
		if opt.Option == *o.Best {
			best = i
		}
	}
	stuck := 0
	for _, r := range o.Options[0].Fleet {
		if !r.Recovers {
			stuck++
		}
	}
	if stuck == 0 {
		t.Fatalf("no policy of the fleet is stuck on the server as it is: the test shows nothing")
	}
	cfg := filepath.Join(dir, "owner.toml")
	if err := os.WriteFile(cfg, []byte(o.Sweep), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", cfg, "--out", res, "--quiet", "--no-report")
	ds, err := analysis.Load(folder(res))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range analysis.QueueAggregates(ds.Records) {
		i := slices.Index(o.Fleet, a.Cell.PolicySpec())
		if i < 0 {
			t.Fatalf("the sweep ran %s, which the view does not list", a.Cell.PolicySpec())
		}
		want := o.Options[best].Fleet[i]
		got := a.Summary(analysis.Recovered)
		if back := got.Unfinished == 0 && got.N > 0; back != want.Recovers || (back && math.Abs(got.Mean-*want.Time) > 1e-9) {
			t.Errorf("%s: the view promises back %v at %v s, the sweep gives back %v at %v s", o.Fleet[i], want.Recovers, want.Time, back, got.Mean)
		}
	}
}

// The main job's owner sweep is the owner's view `sweep recommend` gives
// for its server: run alone, its report's section for the server's owner
// names the recommend command, and that command over the same dataset
// prints the same table, with the sweep's last policy as its answer.
func TestOwnerSweepIsRecommendsView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "../../sweeps.toml", "--sweep", "owner", "--out", res, "--quiet")
	md, err := os.ReadFile(filepath.Join(res, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(md), "## For the server's owner\n")
	if !ok {
		t.Fatalf("the report has no section for the server's owner:\n%s", md)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	cmd := regexp.MustCompile("`(sweep recommend [^`]*)`").FindStringSubmatch(section)
	if cmd == nil {
		t.Fatalf("the owner's section names no recommend command:\n%s", section)
	}
	args, _, err := commandLine(cmd[1])
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, append(args, "--results", res)...)
	var want [][]string // the report's rows, cell by cell
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| option |") {
			want = append(want, strings.Split(strings.Trim(l, "| "), " | "))
		}
	}
	_, view, ok := strings.Cut(out, "\nfor the server's owner, on ")
	if !ok {
		t.Fatalf("recommend printed no owner's view:\n%s", out)
	}
	var got [][]string
	for _, l := range strings.Split(view, "\n")[2:] { // the heading and the table's header row
		if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") || strings.Contains(l, " brings ") {
			break
		}
		got = append(got, regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1))
	}
	if len(want) != 5 || !slices.EqualFunc(want, got, slices.Equal[[]string]) {
		t.Errorf("the report's owner table and recommend's differ:\nreport:    %q\nrecommend: %q", want, got)
	}
	s := repoConfig(t).Sweep("owner")
	answer := s.Cells[len(s.Cells)-1].PolicySpec()
	if !strings.Contains(out, "(as --mine: '"+answer+"')") {
		t.Errorf("recommend's answer is not the owner sweep's last policy %q:\n%s", answer, out)
	}
}

// A queueing server whose workers serve another rate than --capacity
// says so beside the heading, which names --capacity.
func TestRecommendSaysWhatAServerServes(t *testing.T) {
	t.Parallel()
	out := mustRun(t, "recommend", "--capacity", "800", "--clients", "200", "--outage", "10s", "--window", "3m",
		"--server", "concurrency=4 service=exponential service_s=0.02 timeout_s=2 arrival_rps=100")
	if !strings.Contains(out, "serves 200 requests/s, 4 workers at a mean service of 20ms: its workers, not --capacity, set what it serves") {
		t.Errorf("recommend does not say the server serves 200 requests/s, not 800:\n%s", out)
	}
	out = mustRun(t, "recommend", "--capacity", "200", "--clients", "200", "--outage", "10s", "--window", "3m",
		"--server", "concurrency=4 service=exponential service_s=0.02 timeout_s=2 arrival_rps=100")
	if strings.Contains(out, "not --capacity") {
		t.Errorf("recommend says the workers differ from --capacity where they serve it:\n%s", out)
	}
}
