package sim

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/internal/golden"
)

// TestPlainGolden pins the words Plain says for every family, with and
// without the parameters that change them (cap, multiplier, honouring
// Retry-After, one attempt, limits and components), for an unknown family
// and for every preset: testdata/plain.golden holds them, word for word.
func TestPlainGolden(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	say := func(label string, p Policy) { fmt.Fprintf(&b, "%s\n\t%s\n", label, p.Plain()) }
	for _, k := range Kinds() {
		p := DefaultPolicy(k)
		say(string(k), p)
		if k.Reads(FieldCap) {
			q := p
			q.Cap = 0
			if p.Cap == 0 {
				q.Cap = 30 * time.Second
			}
			say(string(k)+" cap="+q.Cap.String(), q)
		}
		if k.Reads(FieldMultiplier) {
			q := p
			q.Multiplier = 1
			say(string(k)+" multiplier=1", q)
		}
		if k.Reads(FieldHonorRetryAfter) {
			q := p
			q.HonorRetryAfter = !p.HonorRetryAfter
			say(fmt.Sprintf("%s honor_retry_after=%t", k, q.HonorRetryAfter), q)
		}
		q := p
		q.MaxAttempts = 1
		say(string(k)+" max_attempts=1", q)
		q = p
		q.MaxAttempts, q.MaxElapsed, q.RetryOn, q.BucketTokens, q.BucketCost, q.RetryBudget = 4, time.Minute, RetryOn5xx, 100, 5, 0.1
		q.ThrottleK, q.ThrottleWindow = 2, 2*time.Minute
		say(string(k)+" with limits and a component", q)
	}
	say("an unknown family", Policy{Kind: "unknown", Base: time.Second})
	for _, pr := range Presets() {
		say("preset "+pr.Name, pr.Policy)
		q := pr.Policy
		q.MaxAttempts = 1
		say("preset "+pr.Name+" max_attempts=1", q)
	}
	golden.CheckString(t, filepath.Join("testdata", "plain.golden"), b.String())
}
