package experiments

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// layersAxis reads layers: a list of service tables is one chain, a list
// of such lists is an axis of chains, and [] is no chain (the server
// alone). A service table is
//
//	{capacity_rps = 500, outage_start_s = 0, recover_s = 0, policy = "exponential max_attempts=3"}
//
// each key optional (no limit, never down, never retries); policy is a
// family's or preset's name, a spec with its parameters, or "none". A
// queueing service adds concurrency (its workers), service ("fixed" or "exponential"),
// service_s and queue_limit; timeout_s is how long its caller waits
// for it (sim/chainq.go). The values' ranges are sim's
// (sim.ValidateChain), checked with the cells.
func (l *loader) layersAxis(path []string, raw any) *axis {
	chains, ok := l.chains(path, raw)
	if !ok {
		return nil
	}
	a := &axis{}
	lines := serviceLines(l.src, locate(l.src, path))
	for n, ch := range chains {
		p := path
		if len(chains) > 1 {
			p = append(append([]string{}, path...), "#"+strconv.Itoa(n))
		}
		if ls, ok := l.chain(p, ch, &lines); ok {
			a.values = append(a.values, value{v: grid.EncodeLayers(ls), path: path})
		}
	}
	if len(a.values) == 0 {
		return nil
	}
	return a
}

// chains reads layers' value as chains of service tables, as fleets reads
// mix's; ok is false for a value that is no list.
func (l *loader) chains(path []string, raw any) (chains [][]map[string]any, ok bool) {
	want := "a list of service tables {capacity_rps = …, outage_start_s = …, recover_s = …, policy = \"…\", concurrency = …, service = \"…\", service_s = …, queue_limit = …, timeout_s = …}, a list of such lists, or [] (no chain)"
	switch x := raw.(type) {
	case []map[string]any:
		return [][]map[string]any{x}, true
	case []any:
		if len(x) == 0 {
			return [][]map[string]any{nil}, true
		}
		for _, e := range x {
			switch y := e.(type) {
			case map[string]any:
				if len(chains) == 0 {
					chains = append(chains, nil)
				}
				chains[0] = append(chains[0], y)
			case []map[string]any:
				chains = append(chains, y)
			case []any:
				var c []map[string]any
				for _, z := range y {
					if t, ok := z.(map[string]any); ok {
						c = append(c, t)
					} else {
						l.fail(path, "%s: want a service table {capacity_rps = …, policy = \"…\"}", grid.Show(z))
					}
				}
				chains = append(chains, c)
			default:
				l.fail(path, "%s: want %s", grid.Show(e), want)
			}
		}
		return chains, true
	}
	l.fail(path, "%s: want %s", grid.Show(raw), want)
	return nil, false
}

// chain reads one chain's service tables; ok is false when one is
// refused.
func (l *loader) chain(path []string, ts []map[string]any, lines *[]int) (ls []sim.Layer, ok bool) {
	if len(ts) > sim.MaxLayers-1 {
		l.fail(path, "%d services: want at most %d in front of the server", len(ts), sim.MaxLayers-1)
		*lines = (*lines)[min(len(ts), len(*lines)):]
		return nil, false
	}
	ok = true
	for i, t := range ts {
		sp := append(append([]string{}, path...), "#"+strconv.Itoa(i))
		line := 0
		if len(*lines) > 0 {
			line, *lines = (*lines)[0], (*lines)[1:]
		}
		var lay sim.Layer
		for _, k := range slices.Sorted(maps.Keys(t)) {
			kp := append(append([]string{}, sp...), k)
			if !l.layerKey(line, kp, &lay, k, t[k]) {
				ok = false
			}
		}
		ls = append(ls, lay)
	}
	return ls, ok
}

// serviceLines are the lines, from line from (1-based) on, on which the
// service tables of a layers value open, in order: each "{" at the top of
// the value's brackets, outside strings and comments, until they close.
// A value over several lines then has each mistake at its service's line.
func serviceLines(src string, from int) []int {
	if from <= 0 {
		return nil
	}
	var out []int
	brackets, braces, started := 0, 0, false
	lines := strings.Split(src, "\n")
	for n := from - 1; n < len(lines); n++ {
		line := lines[n]
		if n == from-1 {
			_, line, _ = strings.Cut(line, "=")
		}
		var quote rune
	scan:
		for _, r := range line {
			switch {
			case quote != 0:
				if r == quote {
					quote = 0
				}
			case r == '"' || r == '\'':
				quote = r
			case r == '#':
				break scan
			case r == '[':
				brackets, started = brackets+1, true
			case r == '{':
				if braces == 0 {
					out = append(out, n+1)
				}
				braces, started = braces+1, true
			case r == ']':
				brackets--
			case r == '}':
				braces--
			}
			if started && brackets <= 0 && braces <= 0 {
				return out
			}
		}
	}
	return out
}

// failAt records a mistake at a line the caller knows (serviceLines),
// else where locate finds path.
func (l *loader) failAt(line int, path []string, format string, args ...any) {
	if line <= 0 {
		l.fail(path, format, args...)
		return
	}
	if len(l.errs) < maxErrors {
		l.errs = append(l.errs, &Error{File: l.file, Line: line, Key: dotted(path), Msg: fmt.Sprintf(format, args...)})
	}
}

// layerKey sets key k of a service from its value v, or reports at path
// why it cannot.
func (l *loader) layerKey(line int, path []string, lay *sim.Layer, k string, v any) bool {
	if k == "policy" {
		s, isStr := v.(string)
		if !isStr {
			l.failAt(line, path, "%s: want a family's or preset's name, a policy spec (\"exponential base_s=0.1 max_attempts=3\") or \"none\"", grid.Show(v))
			return false
		}
		p, err := grid.LayerPolicy(s)
		if err != nil {
			l.failAt(line, path, "%v (or \"none\": the service never retries)", err)
			return false
		}
		if p.ComponentsShort() != "" {
			l.failAt(line, path, "%q: a service's policy has no client components (%s); a chain models attempt limits, backoff and retry budgets", s, p.ComponentsShort())
			return false
		}
		lay.Policy = p
		return true
	}
	if k == "service" {
		if s, isStr := v.(string); isStr && (s == "fixed" || s == "exponential") {
			lay.Service = s
			return true
		}
		l.failAt(line, path, "%s: want \"fixed\" or \"exponential\" (a queueing service's service time)", grid.Show(v))
		return false
	}
	if !slices.Contains(grid.LayerKeys, k) {
		l.failAt(line, path, "unknown key in a service%s: want %s", grid.SuggestKey(k, grid.LayerKeys), strings.Join(grid.LayerKeys, ", "))
		return false
	}
	var x float64
	switch n := v.(type) {
	case int64:
		x = float64(n)
	case float64:
		x = n
	default:
		l.failAt(line, path, "%s: want a number", grid.Show(v))
		return false
	}
	if k == "concurrency" || k == "queue_limit" {
		top, zero := sim.MaxConcurrency, "a counting service"
		if k == "queue_limit" {
			top, zero = sim.MaxQueueLimit, "no limit"
		}
		if x != math.Trunc(x) || x < 0 || x > float64(top) {
			l.failAt(line, path, "%g: want a whole number from 0 (%s) to %d", x, zero, top)
			return false
		}
		if k == "concurrency" {
			lay.Concurrency = int(x)
		} else {
			lay.QueueLimit = int(x)
		}
		return true
	}
	if k == "capacity_rps" {
		if !(x >= 0 && x <= 1e9) || math.IsInf(x, 0) {
			l.failAt(line, path, "%g: want 0 (no limit) or requests/s ≤ 1e9", x)
			return false
		}
		lay.Capacity = x
		return true
	}
	d, isMS := grid.SecondsDuration(x)
	if !isMS || d < 0 {
		l.failAt(line, path, "%g: want a time ≥ 0 in s, a whole number of milliseconds", x)
		return false
	}
	*grid.LayerDuration(lay, k) = d
	return true
}
