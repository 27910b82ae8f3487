package experiments

import (
	"strings"
	"testing"
	"time"
)

// A brownout's keys are checked at file:line:key with what is accepted,
// as sim's Validate bounds them.
func TestBrownoutKeysAreCheckedAtTheKey(t *testing.T) {
	t.Parallel()
	queue := "concurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\n"
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"share above 1", base + "[sweep.s]\npolicy = \"fixed\"\nfail_share = 1.5\n",
			[]string{"t.toml:6: sweep.s.fail_share: 1.5: want a share of the requests served in [0, 1]"}},
		{"one share of an axis negative", base + "[sweep.s]\npolicy = \"fixed\"\nfail_share = [0, 0.5, -0.1]\n",
			[]string{"t.toml:6: sweep.s.fail_share: -0.1: want a share of the requests served in [0, 1]"}},
		{"a share as a string", base + "[sweep.s]\npolicy = \"fixed\"\nfail_share = \"10%\"\n",
			[]string{`t.toml:6: sweep.s.fail_share: "10%": want a number`}},
		{"a curve that does not parse", base + "[sweep.s]\npolicy = \"fixed\"\nfail_share = 0.2\nfail_curve = \"1 high 1\"\n",
			[]string{`t.toml:7: sweep.s.fail_curve: 1 high 1: want multipliers ≥ 0 separated by spaces or commas; "high" (number 2) is not one`}},
		{"a curve over 1", base + "[sweep.s]\npolicy = \"fixed\"\nfail_share = [0.2, 0.5]\nfail_curve = \"1 3\"\n",
			[]string{"t.toml:7: sweep.s.fail_curve: 1 3: want multipliers whose largest (now 3) times fail_share (0.5) is at most 1"}},
		{"added latency on the counting server", base + "[sweep.s]\npolicy = \"fixed\"\nadded_latency_s = 0.2\n",
			[]string{"t.toml:6: sweep.s.added_latency_s: 0.2: want 0 unless concurrency > 0: the counting server answers within the tick"}},
		{"added latency negative", base + "[sweep.s]\npolicy = \"fixed\"\n" + queue + "added_latency_s = -1\n",
			[]string{"t.toml:9: sweep.s.added_latency_s: -1: want"}},
		{"added latency without its unit", base + "[sweep.s]\npolicy = \"fixed\"\nadded_latency = 0.2\n",
			[]string{`t.toml:6: sweep.s.added_latency: unknown key (did you mean "added_latency_s"? the added latency, in seconds)`}},
		{"a failure rate", base + "[sweep.s]\npolicy = \"fixed\"\nfailure_rate = 0.2\n",
			[]string{`t.toml:6: sweep.s.failure_rate: unknown key (did you mean "fail_share"?`}},
	} {
		_, err := Load("t.toml", []byte(tt.src))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%v\nwant it to contain\n%s", tt.name, err, w)
			}
		}
	}
}

// A brownout sweep loads into cells whose scenarios hold it; a share of 0
// beside a curve is no brownout, and its cell's key is the key of the same
// cell without brownout keys (a parameter at its zero stays out of keys).
func TestBrownoutSweepLoads(t *testing.T) {
	t.Parallel()
	src := base + "[sweep.s]\npolicy = \"fixed\"\nfail_share = [0, 0.25]\n" +
		"[sweep.q]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nadded_latency_s = 0.05\nfail_share = 0.1\nfail_curve = \"0, 1 2\"\n" +
		"[sweep.plain]\npolicy = \"fixed\"\n"
	cfg, err := Load("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string][]string{}
	for _, sw := range cfg.Sweeps {
		for _, c := range sw.Cells {
			cells[sw.Name] = append(cells[sw.Name], c.Key())
		}
	}
	s := cfg.Sweep("s")
	q := cfg.Sweep("q")
	if got := s.Cells[1].Scenario.FailShare; got != 0.25 {
		t.Errorf("fail_share %g, want 0.25", got)
	}
	if sc := q.Cells[0].Scenario; sc.AddedLatency != 50*time.Millisecond || sc.FailCurve != "0, 1 2" || sc.FailShare != 0.1 {
		t.Errorf("queueing brownout: %+v", sc)
	}
	if cells["s"][0] != cells["plain"][0] {
		t.Errorf("fail_share = 0 moved the cell's key: %s, without it %s", cells["s"][0], cells["plain"][0])
	}
}
