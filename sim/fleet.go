package sim

import (
	"fmt"
	"math"
)

// MaxGroups is the most policy groups a mixed fleet may have.
const MaxGroups = 4

// Group is a share of a fleet on one policy.
type Group struct {
	Share  float64 // fraction of the clients, (0, 1]
	Policy Policy
}

// GroupResult is a group's part of a run's metrics.
type GroupResult struct {
	Clients           int
	Succeeded         int
	GaveUp            int
	Sent              int64
	SentAfterRecovery int64
	T50, T99, AllDone Milestone
}

// RunFleet simulates sc with the clients split between groups (shares
// summing to 1). Clients are assigned so that every prefix of the index
// order holds each group in proportion, so no group is favoured by being
// served first. Result.Groups holds each group's part.
func (s *Sim) RunFleet(sc Scenario, groups []Group, rng *Mulberry32, tl *Timeline) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	if err := ValidateFleet(groups); err != nil {
		return Result{}, err
	}
	if sc.Server() == QueueingServer && len(groups) > 1 {
		return Result{}, &FieldError{FieldConcurrency, sc.Concurrency, "0 for a mixed fleet: its per-group metrics are the counting server's"}
	}
	return s.run(sc, groups, rng, tl)
}

// ValidateFleet checks a fleet's groups: 1 to MaxGroups valid policies whose
// shares are in (0, 1] and sum to 1.
func ValidateFleet(groups []Group) error {
	if len(groups) == 0 || len(groups) > MaxGroups {
		return &FieldError{FieldGroups, len(groups), fmt.Sprintf("1 to %d groups", MaxGroups)}
	}
	sum := 0.0
	for i, g := range groups {
		if !(g.Share > 0 && g.Share <= 1) {
			return &FieldError{FieldShare, g.Share, "a fraction of the fleet in (0, 1]"}
		}
		if err := g.Policy.Validate(); err != nil {
			return fmt.Errorf("group %d: %w", i, err)
		}
		if len(groups) > 1 && g.Policy.componentsOn() {
			return fmt.Errorf("group %d: %w", i, &FieldError{FieldMix, g.Policy.String(), "policies without client components (throttling, breakers, retry caps) in a mixed fleet: they run with a single policy"})
		}
		sum += g.Share
	}
	if math.Abs(sum-1) > 1e-9 {
		return &FieldError{FieldShare, sum, "shares that sum to 1"}
	}
	return nil
}

// assign gives each of n clients a group: client i goes to the group
// furthest behind its share of the first i+1 clients (ties: the lower).
func assign(dst []uint8, groups []Group) {
	var count [MaxGroups]float64
	for i := range dst {
		best, lag := 0, math.Inf(-1)
		for g, gr := range groups {
			if l := float64(gr.Share*float64(i+1)) - count[g]; l > lag+1e-12 {
				best, lag = g, l
			}
		}
		dst[i] = uint8(best)
		count[best]++
	}
}

// fleet dispatches each client's rejection to its group's delayer and
// counts the group's give-ups.
type fleet struct {
	n      int
	group  []uint8
	ds     [MaxGroups]delayer
	buds   [MaxGroups]*budget
	maxAtt [MaxGroups]int32
	gaveUp [MaxGroups]int
	lims   [MaxGroups]limited
	bud    [MaxGroups]budget
}

func (f *fleet) delay(c *client, r response, rng *Mulberry32) float64 {
	g := f.group[r.index]
	if m := f.maxAtt[g]; m > 0 && c.att >= m {
		f.gaveUp[g]++
		return giveUp
	}
	d := f.ds[g].delay(c, r, rng)
	if d < 0 {
		f.gaveUp[g]++
	}
	return d
}

// setup prepares the fleet for a run of sc.
func (f *fleet) setup(sc Scenario, groups []Group, n int) {
	f.n = len(groups)
	if cap(f.group) < sc.Clients {
		f.group = make([]uint8, sc.Clients)
	}
	f.group = f.group[:sc.Clients]
	assign(f.group, groups)
	for g, gr := range groups {
		f.ds[g], f.buds[g] = newDelayer(sc, gr.Policy, &f.lims[g], &f.bud[g], nil)
		f.maxAtt[g] = int32(gr.Policy.MaxAttempts)
		f.gaveUp[g] = 0
	}
}
