package analysis

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The reference scenario is chosen by its rule, not by where it stands:
// among the scenes with an answer, one closest to the article's (no other
// answered scene differs from it in fewer parameters), the first of
// those; the article's own scenario whenever it is there and answered;
// never a scene without an answer; -1 only when none has one.
func TestReferenceIsTheClosestToTheArticle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pick := func(xs ...any) any { return xs[r.IntN(len(xs))] }
	article := Scene{Query: Query{Capacity: ReferenceCapacity, Clients: ReferenceFamily.Clients, Outage: ReferenceFamily.Outage}, Family: ReferenceFamily}
	for i := range 5000 {
		scenes := make([]Scene, r.IntN(8))
		for j := range scenes {
			q := Query{Capacity: pick(ReferenceCapacity, 300.0, 60.0).(float64), Clients: pick(ReferenceFamily.Clients, 5000).(int),
				Outage: pick(ReferenceFamily.Outage, time.Minute).(time.Duration), RetryAfter: pick(time.Duration(0), 30*time.Second).(time.Duration),
				Server: pick("", "cost 0.5").(string)}
			f := Family{Clients: q.Clients, Outage: q.Outage, RetryAfter: q.RetryAfter, Server: q.Server, Window: pick(DefaultWindow, 5*time.Minute).(time.Duration)}
			scenes[j] = Scene{Query: q, Family: f, Answered: r.IntN(4) > 0}
		}
		if len(scenes) > 0 && r.IntN(3) == 0 {
			k := r.IntN(len(scenes))
			scenes[k] = article
			scenes[k].Answered = r.IntN(2) == 0
		}
		got := Reference(scenes)
		answered := -1
		for j, s := range scenes {
			if s.Answered {
				answered = j
				break
			}
		}
		if answered < 0 {
			if got != -1 {
				t.Fatalf("case %d: %d, want -1: no scene has an answer", i, got)
			}
			continue
		}
		if got < 0 || !scenes[got].Answered {
			t.Fatalf("case %d: %d: not an answered scene of %+v", i, got, scenes)
		}
		for j, s := range scenes {
			if !s.Answered {
				continue
			}
			if d, g := distance(s), distance(scenes[got]); d < g || d == g && j < got {
				t.Fatalf("case %d: chose %d (%d parameters off the article's), but %d is answered and %d off", i, got, g, j, d)
			}
			if s == article && scenes[got] != article {
				t.Fatalf("case %d: the article's scenario %d is answered, chose %d", i, j, got)
			}
		}
	}
}

// Without the article's scenario, the closest is chosen, not the first.
func TestReferenceWithoutTheArticlesScenario(t *testing.T) {
	far := Scene{Query: Query{Capacity: 300, Clients: 5000, Outage: time.Minute}, Family: Family{Clients: 5000, Outage: time.Minute, Window: DefaultWindow}, Answered: true}
	near := Scene{Query: Query{Capacity: 300, Clients: ReferenceFamily.Clients, Outage: ReferenceFamily.Outage}, Family: ReferenceFamily, Answered: true}
	if got := Reference([]Scene{far, near}); got != 1 {
		t.Errorf("Reference = %d, want 1: it differs from the article's in its capacity only, the first in three parameters", got)
	}
}
