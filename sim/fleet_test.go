package sim

import (
	"math"
	"testing"
	"time"
)

func TestAssignInterleaves(t *testing.T) {
	t.Parallel()
	groups := []Group{{Share: 0.7}, {Share: 0.2}, {Share: 0.1}}
	dst := make([]uint8, 1000)
	assign(dst, groups)
	var count [3]int
	for i, g := range dst {
		count[g]++
		for j, gr := range groups { // every prefix holds each group within one client of its share
			if math.Abs(float64(count[j])-gr.Share*float64(i+1)) > 1 {
				t.Fatalf("after %d clients group %d has %d, share %v", i+1, j, count[j], gr.Share)
			}
		}
	}
	if count != [3]int{700, 200, 100} {
		t.Errorf("counts %v", count)
	}
}

func TestFleetMetricsAddUp(t *testing.T) {
	t.Parallel()
	sc := Article()
	sc.RetryAfter = 10 * time.Second
	groups := []Group{
		{Share: 0.8, Policy: DefaultPolicy(Decorrelated)},
		{Share: 0.1, Policy: Policy{Kind: Fixed, Base: 5 * time.Second, MaxAttempts: 8}},
		{Share: 0.1, Policy: Policy{Kind: HTTPRetry, Base: time.Second, Multiplier: 2, Cap: 30 * time.Second, HonorRetryAfter: true, MaxElapsed: time.Minute}},
	}
	var s Sim
	r, err := s.RunFleet(sc, groups, NewMulberry32(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.NGroups != 3 {
		t.Fatalf("NGroups %d", r.NGroups)
	}
	var clients, succ, quit int
	var sent, after int64
	for _, g := range r.Groups[:r.NGroups] {
		clients += g.Clients
		succ += g.Succeeded
		quit += g.GaveUp
		sent += g.Sent
		after += g.SentAfterRecovery
	}
	if clients != r.Clients || succ != r.Succeeded || quit != r.GaveUp || sent != r.Sent || after != r.SentAfterRecovery {
		t.Errorf("groups %+v do not add up to %+v", r.Groups, r)
	}
	if r.Groups[1].GaveUp == 0 || r.Groups[0].GaveUp != 0 {
		t.Errorf("give-ups: %d in the capped group, %d in decorrelated; want some and none", r.Groups[1].GaveUp, r.Groups[0].GaveUp)
	}
}

// Two groups on the same policy are the same fleet as one.
func TestFleetOfOnePolicyIsThatPolicy(t *testing.T) {
	t.Parallel()
	sc := Article()
	p := DefaultPolicy(FullJitter)
	var s Sim
	one, _ := s.Run(sc, p, NewMulberry32(8), nil)
	two, err := s.RunFleet(sc, []Group{{Share: 0.5, Policy: p}, {Share: 0.5, Policy: p}}, NewMulberry32(8), nil)
	if err != nil {
		t.Fatal(err)
	}
	two.Groups, two.NGroups = [MaxGroups]GroupResult{}, 0
	if one != two {
		t.Errorf("fleet of one policy:\n%+v\nwant\n%+v", two, one)
	}
}

func TestValidateFleet(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy(Fixed)
	for _, bad := range [][]Group{nil, {{Share: 0.5, Policy: p}}, {{Share: 0, Policy: p}, {Share: 1, Policy: p}},
		{{Share: 0.5, Policy: p}, {Share: 0.5, Policy: Policy{Kind: "x"}}},
		{{Share: 0.2, Policy: p}, {Share: 0.2, Policy: p}, {Share: 0.2, Policy: p}, {Share: 0.2, Policy: p}, {Share: 0.2, Policy: p}}} {
		if err := ValidateFleet(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
