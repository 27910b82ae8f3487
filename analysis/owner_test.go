package analysis

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// The owner's view a dataset holds (StoredOwners) is the one Owner
// measures, value for value, answer included; a dataset lacking one run of
// the fleet holds none, and one lacking a run of the answer holds the
// view without it.
func TestStoredOwnersIsOwner(t *testing.T) {
	t.Parallel()
	base := Request{Outage: 20 * time.Second, Window: 3 * time.Minute}.Scenario(100, 300)
	s := Server{Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: time.Second, Arrival: 70}
	answer := sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second}.Normalize()
	var recs []Record
	keep := func(ctx context.Context, runs []grid.Run) ([]Record, error) {
		got, err := simulate(ctx, runs)
		recs = append(recs, got...)
		return got, err
	}
	want, _, err := Owner(context.Background(), base, s, answer, Query{Capacity: base.Capacity}, DefaultOwnerSeeds, keep)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b *OwnerView) bool {
		if a.Best != b.Best || !slices.Equal(a.Fleet, b.Fleet) || len(a.Back) != len(b.Back) {
			return false
		}
		for i := range a.Back {
			for j := range a.Back[i] {
				x, y := a.Back[i][j], b.Back[i][j]
				if x.Recovers() != y.Recovers() || x.Why != y.Why || (x.Recovers() && x.Time != y.Time) {
					return false
				}
			}
		}
		return true
	}
	got, err := StoredOwners(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !same(got[0].View, want) || got[0].Base != base {
		t.Fatalf("stored: %d views; want the one Owner measured", len(got))
	}
	without := func(p sim.Policy) []Record {
		return slices.DeleteFunc(slices.Clone(recs), func(r Record) bool { return r.Cell.Policy == p && r.Seed == 2 && r.Cell.Scenario.QueueWait > 0 })
	}
	if got, _ := StoredOwners(without(want.Fleet[0])); len(got) != 0 {
		t.Errorf("a dataset lacking a run of %s holds an owner's view", want.Fleet[0].Short())
	}
	got, err = StoredOwners(without(answer))
	if err != nil || len(got) != 1 || slices.Contains(got[0].View.Fleet, answer) || len(got[0].View.Fleet) != len(OwnerFleet) {
		t.Errorf("a dataset lacking a run of the answer: %d views, err %v; want the view of the fleet alone", len(got), err)
	}
}
