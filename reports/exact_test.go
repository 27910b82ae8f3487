package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/sim"
)

// Only a row without jitter is called exact: its digits on seeds 206–210
// are what the seeds were searched for. A jittered row's five seeds are
// one draw, so it is judged by z, even where the digits match (issue 22:
// a jittered t50 was "exact" at z = +2.4).
func TestOnlyRowsWithoutJitterAreExact(t *testing.T) {
	t.Parallel()
	// The article's rows without jitter: fixed and exponential backoff,
	// and ra-exact, which waits exactly the Retry-After the server always
	// sends. Every other row's policy draws its delays.
	steady := map[sim.Kind]bool{sim.Fixed: true, sim.Exponential: true, sim.RAExact: true}
	for _, tbl := range articleTables(t, 30) {
		for _, r := range tbl.Compared {
			if want := !steady[r.Cell.Policy.Kind]; r.Jittered != want {
				t.Errorf("%s / %s: jittered %v, want %v", tbl.ID, r.Label, r.Jittered, want)
			}
			if r.Exact && r.Jittered {
				t.Errorf("%s / %s: a jittered row called exact", tbl.ID, r.Label)
			}
			for _, m := range tbl.Metrics {
				v := Verdict(r, m)
				if v == "exact" && r.Jittered {
					t.Errorf("%s / %s / %s: verdict %q for a jittered row (z %+.1f)", tbl.ID, r.Label, m, v, r.Many[m].Z)
				}
				// A jittered figure is judged by z wherever there is one.
				if sp := r.Many[m]; r.Jittered && !math.IsNaN(sp.Z) {
					want := "within sampling error"
					if math.Abs(sp.Z) > 2 {
						want = "off by"
					}
					if !strings.HasPrefix(v, want) {
						t.Errorf("%s / %s / %s: verdict %q at z %+.1f, want %q…", tbl.ID, r.Label, m, v, sp.Z, want)
					}
				}
			}
		}
	}
	// The case the issue found, on its own: digits equal, z = +2.4.
	pub := article.Published{Value: 43.5}
	r := analysis.ArticleRow{Jittered: true,
		Published: map[article.Metric]article.Published{article.T50: pub},
		Ours:      map[article.Metric]analysis.Figure{article.T50: {Value: 43.5}},
		Many:      map[article.Metric]analysis.Spread{article.T50: {Seeds: 1000, Mean: 43.15, SD5: 0.146, Z: 2.4}}}
	if v := Verdict(r, article.T50); v != "off by 2.4 sd" {
		t.Errorf("jittered t50, same digits, z = +2.4: %q, want \"off by 2.4 sd\"", v)
	}
	r.Many = nil // reproduce --seeds 0: no z to judge by
	if v := Verdict(r, article.T50); v == "exact" {
		t.Errorf("jittered t50, same digits, no z: %q, want anything but exact", v)
	}
	r.Jittered = false // the same figures without jitter: exact
	if v := Verdict(r, article.T50); v != "exact" {
		t.Errorf("t50 without jitter, same digits: %q, want exact", v)
	}
}
