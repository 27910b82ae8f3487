package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A server whose queue holds at most N requests is said in a sentence:
// "a queue that holds at most 50 waiting", not "a queue that at most 50
// waiting"; with a wait bound as well, both clauses read after "that".
func TestQueueBoundWords(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 4, "fixed", 20*time.Millisecond, 500*time.Millisecond
	for _, c := range []struct {
		limit int
		wait  time.Duration
		want  string
	}{
		{50, 0, "a queue that holds at most 50 waiting;"},
		{50, 300 * time.Millisecond, "a queue that holds at most 50 waiting, turns away what would wait over 300ms;"},
		{0, 300 * time.Millisecond, "a queue that turns away what would wait over 300ms;"},
	} {
		s := sc
		s.QueueLimit, s.QueueWait = c.limit, c.wait
		if got := serverWords(s); !strings.Contains(got, c.want) {
			t.Errorf("queue_limit %d, queue_wait %v: %q: want it to say %q", c.limit, c.wait, got, c.want)
		}
	}
}
