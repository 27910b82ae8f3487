package sim

import (
	"strings"
	"testing"
)

// A closest built-in setting is a valid policy of the library's own
// family with the answer's attempt limit and cap: Polly v8's decorrelated
// jitter V2 (BackoffType Exponential with UseJitter) with the answer's
// median first delay; grpc-go's retryPolicy (±20 % from the first retry)
// with the answer's gRPC throttling; and the text offers it.
func TestClosestIsTheLibrarysOwn(t *testing.T) {
	t.Parallel()
	n := 0
	for _, p := range settingPolicies(4, 400) {
		for _, s := range p.Settings() {
			c := s.Closest
			if c == nil {
				continue
			}
			n++
			q := c.Policy
			if err := q.Validate(); err != nil {
				t.Errorf("%s: %s: closest %s: %v", p.Short(), s.Library, q, err)
			}
			if !strings.HasSuffix(s.How, "; closest built-in: "+c.How+" (not measured)") || s.Exact {
				t.Errorf("%s: %s: %q (exact %v) does not end with its closest setting", p.Short(), s.Library, s.How, s.Exact)
			}
			if q.Cap != p.Cap {
				t.Errorf("%s: %s: closest cap %v", p.Short(), s.Library, q.Cap)
			}
			switch s.Library {
			case "Polly v8":
				f, _, _ := p.firstDelay()
				if q.Kind != PollyV2 || q.Base != f || q.AttemptLimit() != p.AttemptLimit() || q.WithoutComponents() != q {
					t.Errorf("%s: Polly's closest %+v", p.Short(), q)
				}
			case "grpc-go (call retries)":
				n := p.AttemptLimit()
				if n == 0 {
					n = manyAttempts
				}
				if q.Kind != GRPC || q.Width != 0.2 || q.MaxAttempts != n || q.RetryTokens != p.RetryTokens || q.RetryTokenRatio != p.RetryTokenRatio || q.ClientsPerProcess != p.ClientsPerProcess {
					t.Errorf("%s: grpc-go's closest %+v", p.Short(), q)
				}
			default:
				t.Errorf("%s: a closest setting for %s", p.Short(), s.Library)
			}
			m := s.Measured(1.25, 10, 0, 0)
			if !strings.HasSuffix(m.How, "(t99 1.25× the answer's, measured over 10 seeds)") || strings.Contains(m.How, "not measured") || m.Measured(1.25, 10, 0, 0).How != m.How {
				t.Errorf("%s: %s: measured %q", p.Short(), s.Library, m.How)
			}
			if m := m.Measured(1.25, 10, 0, 3); !strings.HasSuffix(m.How, "(not compared: the answer's t99 is not reached in 3 of 10 seeds, measured)") || m.Closest.Ratio != 0 {
				t.Errorf("%s: %s: measured against an answer not back %q", p.Short(), s.Library, m.How)
			}
		}
	}
	if n < 100 {
		t.Errorf("%d closest settings; the policies should give at least 100", n)
	}
}
