package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"
)

// replay is a perfect live run: sim's own run of seed, as a measurement
// of driver d.
func replay(t *testing.T, sc sim.Scenario, p sim.Policy, seed uint32, d Driver) *Measurement {
	t.Helper()
	var s sim.Sim
	var tl sim.Timeline
	r, err := s.Run(sc, p, sim.NewMulberry32(seed), &tl)
	if err != nil {
		t.Fatal(err)
	}
	m := &Measurement{Config: Config{Scenario: sc, Seed: seed, Driver: d, Grace: 10 * time.Millisecond}, Result: r, Placed: sc.Clients}
	for _, a := range tl.Arrivals {
		m.Arrivals = append(m.Arrivals, int(a))
	}
	return m
}

// smallScenario is a random scenario of the size the live tests run.
func smallScenario(rng *sim.Mulberry32) sim.Scenario {
	tick := time.Duration(50+int(rng.Float64()*250)) * time.Millisecond
	sc := sim.Scenario{Clients: 10 + int(rng.Float64()*190), Tick: tick,
		RecoverAt: time.Duration(rng.Float64()*5000) * time.Millisecond,
		Spread:    time.Duration(rng.Float64()*2000) * time.Millisecond}
	sc.Capacity = math.Ceil(1000/float64(tick.Milliseconds())) * (1 + math.Floor(rng.Float64()*20))
	sc.Horizon = sc.RecoverAt + time.Minute
	if rng.Float64() < 0.3 {
		sc.RetryAfter = time.Second
	}
	return sc
}

// The verdict's standard is the same both ways. Over random presets,
// scenarios and seeds, a perfect live run is set against its own preset
// and against a planted wrong one, on evidence that holds and on evidence
// that does not (requests the harness placed counted in another tick;
// ticks answered late by a library driver's server):
//
//   - the metrics say what they say whatever the evidence (Disagree);
//   - evidence that does not hold makes every verdict inconclusive, an
//     agreement as much as a disagreement: never "agrees";
//   - evidence that holds agrees exactly when no metric lies outside;
//   - a sim: client's run is judged by where its requests landed, not by
//     when the server answered (it places them itself).
//
// 60 cases; under -short (.ci/run's race step) the first 20 of them.
func TestVerdictSameStandardBothWays(t *testing.T) {
	t.Parallel()
	rng := sim.NewMulberry32(4)
	presets := sim.Presets()
	lib, _ := DriverByName("go-retryablehttp")
	seeds := seedsUpTo(40)
	var agreed, disagreed int
	n := 60
	if testing.Short() {
		n = 20
	}
	for c := range n {
		sc := smallScenario(rng)
		pr := presets[int(rng.Float64()*float64(len(presets)))]
		wrong := presets[int(rng.Float64()*float64(len(presets)))]
		seed := uint32(1 + rng.Float64()*40)
		stepped := simDriver(pr)
		for _, d := range []Driver{lib, stepped} {
			base := replay(t, sc, pr.Policy, seed, d)
			real := base.Config.real(sc.Tick)
			evidence := []struct {
				name string
				edit func(m *Measurement)
				bad  bool
			}{
				{"holds", func(*Measurement) {}, false},
				{"one request misplaced", func(m *Measurement) { m.Misplaced = 1 }, true},
				{"all misplaced", func(m *Measurement) { m.Misplaced = m.Placed }, true},
				{"ticks answered late", func(m *Measurement) {
					m.CloseLateP99, m.CloseLateMax = real/10+time.Millisecond, real/2
				}, !d.stepped},
				{"ticks answered on time", func(m *Measurement) { m.CloseLateP99, m.CloseLateMax = real/10, real/10 }, false},
			}
			for _, model := range []sim.Preset{pr, wrong} {
				clean, err := Compare(base, model.Policy, seeds, 5)
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evidence {
					m := *base
					ev.edit(&m)
					got, err := Compare(&m, model.Policy, seeds, 5)
					if err != nil {
						t.Fatal(err)
					}
					where := fmt.Sprintf("case %d: %s as %s against %s, evidence %s", c, pr.Name, d.Name, model.Name, ev.name)
					if !slices.Equal(got.Disagree, clean.Disagree) {
						t.Errorf("%s: outside the band %v, with sound evidence %v: the evidence changed what the metrics say", where, got.Disagree, clean.Disagree)
					}
					switch {
					case ev.bad && got.Verdict != Inconclusive:
						t.Errorf("%s: verdict %s (outside %v), want inconclusive", where, got.Verdict, got.Disagree)
					case !ev.bad && got.Verdict == Inconclusive:
						t.Errorf("%s: inconclusive (%v), want a verdict", where, got.Degraded)
					case !ev.bad && (got.Verdict == Agrees) != (len(got.Disagree) == 0):
						t.Errorf("%s: verdict %s with %v outside the band", where, got.Verdict, got.Disagree)
					}
					if !ev.bad {
						switch got.Verdict {
						case Agrees:
							agreed++
						case Disagrees:
							disagreed++
						}
					}
					if o := Overall([]*Comparison{clean, got}); (ev.bad && o != Inconclusive) || (!ev.bad && o != decide(nil, append(clean.Disagree, got.Disagree...))) {
						t.Errorf("%s: overall %s", where, o)
					}
				}
			}
		}
	}
	if agreed == 0 || disagreed == 0 {
		t.Errorf("%d agreements and %d disagreements on sound evidence: want both among the cases", agreed, disagreed)
	}
}

// The text, the JSON, the page's caption and the figure's title say one
// verdict, the comparison's: an agreement on ticks answered late is
// inconclusive in all four (the text said "agrees, though …" where the
// figure said "inconclusive").
func TestVerdictOneValueEverywhere(t *testing.T) {
	t.Parallel()
	sc := sim.Scenario{Clients: 100, Tick: 100 * time.Millisecond, RecoverAt: 2 * time.Second, Capacity: 100, Spread: time.Second, Horizon: time.Minute}
	lib, _ := DriverByName("go-retryablehttp")
	pr, _ := sim.PresetByName(lib.Preset)
	wrong, _ := sim.PresetByName("failsafe-go")
	seeds := seedsUpTo(40)
	for _, tt := range []struct {
		name  string
		model sim.Policy
		late  bool
		want  string
	}{
		{"agrees", pr.Policy, false, "agrees"},
		{"disagrees", wrong.Policy, false, "disagrees"},
		{"agrees on late ticks", pr.Policy, true, "inconclusive"},
		{"disagrees on late ticks", wrong.Policy, true, "inconclusive"},
	} {
		m := replay(t, sc, pr.Policy, 7, lib)
		if tt.late {
			m.CloseLateP99, m.CloseLateMax = 30*time.Millisecond, 40*time.Millisecond
		}
		c, err := Compare(m, tt.model, seeds, 5)
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := c.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		var said string
		for line := range strings.Lines(text.String()) {
			if v, ok := strings.CutPrefix(line, "verdict: "); ok {
				said = firstWord(v)
			}
		}
		f := c.Figure(10)
		title := firstWord(f.Title[strings.LastIndex(f.Title, ": ")+2:])
		caption := firstWord(f.Caption[strings.LastIndex(f.Caption, "verdict: ")+len("verdict: "):])
		js, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var j map[string]any
		if err := json.Unmarshal(js, &j); err != nil {
			t.Fatal(err)
		}
		jv, _ := j["verdict"].(string)
		if said != tt.want || title != tt.want || caption != tt.want || jv != tt.want {
			t.Errorf("%s: text %q, figure title %q (%q), caption %q, JSON %q; want %q in all", tt.name, said, title, f.Title, caption, jv, tt.want)
		}
	}
}

// firstWord is s's first word, in lower case.
func firstWord(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexFunc(s, func(r rune) bool { return r < 'a' || r > 'z' }); i >= 0 {
		s = s[:i]
	}
	return s
}

// Every figure's title fits its image: rendered for every driver, against
// the longest preset name, with every verdict, no pixel of the title's
// band touches the image's left or right edge (the title was cut).
func TestFigureTitleFits(t *testing.T) {
	t.Parallel()
	longest := ""
	for _, p := range sim.Presets() {
		if len(p.Name) > len(longest) {
			longest = p.Name
		}
	}
	var drivers []string
	for _, d := range Drivers() {
		drivers = append(drivers, d.Name)
	}
	slices.SortFunc(drivers, func(a, b string) int { return len(b) - len(a) })
	for _, name := range drivers[:3] { // the longest names
		for _, v := range []Verdict{Agrees, Disagrees, Inconclusive} {
			c := &Comparison{Driver: name, Name: longest, Seeds: 200, BandPct: [2]float64{5, 95}, Recover: "5s", Verdict: v,
				Ticks: []TickBand{{T: 0, Live: 3, Band: Band{1, 2, 4}}, {T: 0.1, Live: 5, Band: Band{2, 3, 6}}}}
			f := c.Figure(10)
			var buf bytes.Buffer
			if err := plots.Render(&buf, f, "footer", "png"); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			const edge, band = 6, 30 // px: the edge columns; the title's rows
			for y := b.Min.Y; y < b.Min.Y+band; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					if x == b.Min.X+edge {
						x = b.Max.X - edge
					}
					if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
						t.Fatalf("%q: the title reaches the image's edge at (%d, %d): cut", f.Title, x, y)
					}
				}
			}
		}
	}
}
