package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// --mine reads the policy_spec of a stored row as that row's policy: a
// family's spec names every parameter that is not zero, so one it leaves
// out is zero (here exponential backoff without a cap, which the family's
// defaults would give 60 s), and the verdict judges exactly that policy.
func TestMineReadsAStoredSpec(t *testing.T) {
	t.Parallel()
	const spec = "exponential base_s=1 multiplier=2"
	js := mustRun(t, "recommend", "--server", "free", "--capacity", "40", "--clients", "100", "--seeds", "2", "--max-seeds", "2", "--json", "--mine", spec)
	var doc struct {
		Mine *struct {
			Candidate struct {
				Policy struct {
					Family string  `json:"family"`
					CapS   float64 `json:"cap_s"`
					Spec   string  `json:"spec"`
				} `json:"policy"`
			} `json:"candidate"`
		} `json:"mine"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, js)
	}
	if doc.Mine == nil {
		t.Fatalf("no verdict on --mine:\n%s", js)
	}
	if p := doc.Mine.Candidate.Policy; p.Spec != spec || p.Family != "exponential" || p.CapS != 0 {
		t.Errorf("--mine %q judged %+v, want the policy that spec names (no cap)", spec, p)
	}
}

// An empty --mine is an error, not "no --mine"; a scenario's parameter
// says where recommend's scenario is set.
func TestMineErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mine, want string
	}{
		{" ", "--mine \" \": empty"},
		{"decorrelated concurrency=3", "concurrency=3: a parameter of the scenario, not of the policy: recommend's scenario is --capacity"},
		{"fixd base=5s", "\"fixd\" (did you mean \"fixed\"?): want a family"},
	} {
		_, stderr, code := sweep(t, "recommend", "--capacity", "40", "--clients", "100", "--mine", tt.mine)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("--mine %q: exit %d, %s: want 2 and %q", tt.mine, code, stderr, tt.want)
		}
	}
}
