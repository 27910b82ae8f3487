package funcsize

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// offenders are the functions over the limits when the rule came in
// (issue 24), each with its size then: the list may only shrink. A
// function split below the limits leaves it (TestRepository says so); none
// may join it, nor grow. Every one of them has been split: none is left.
var offenders = map[string]Size{}

// hotLoops are the simulator's hot loops allowed over the limits, each
// with why; its doc comment must carry the measurement (HotLoopWord) of
// what splitting it costs. None is over them today: loopDense, loopList
// and loopQueue are within both.
var hotLoops = map[string]string{}

// TestRepository holds every function of the repository (tests aside) to
// 80 lines and cyclomatic complexity 25 (gocyclo's count), but the listed
// offenders, which may only shrink, and the simulator's hot loops.
func TestRepository(t *testing.T) {
	t.Parallel()
	funcs, err := Measure("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) < 1000 {
		t.Fatalf("measured %d functions: the repository was not found from here", len(funcs))
	}
	if bad := Check(funcs, offenders, hotLoops); len(bad) > 0 {
		t.Errorf("%d functions break the size rule:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// Complexity counts as gocyclo does (github.com/fzipp/gocyclo,
// complexity.go, and its testdata): checked on the repository's 1,202
// functions against gocyclo v0.6.0 when written, every count the same.
func TestComplexity(t *testing.T) {
	t.Parallel()
	src := `package p

func empty() {}

func branches(a, b bool, xs []int) int {
	if a && b || !a {
		return 1
	} else if b {
		return 2
	}
	for i := 0; i < 3; i++ {
	}
	for range xs {
	}
	return 0
}

func switches(x int, c chan int) {
	switch x {
	case 1, 2:
	case 3:
	default:
	}
	switch {
	}
	select {
	case <-c:
	case c <- 1:
	default:
	}
}

func (t *T) method() {
	f := func() {
		if true {
		}
	}
	f()
}

func (g G[P]) generic() {}

var lit = func(a bool) {
	if a {
	}
}
`
	funcs, err := MeasureSource("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name             string
		Line, Lines, Cyc int
	}
	var got []row
	for _, f := range funcs {
		got = append(got, row{f.Name, f.Line, f.Lines, f.Complexity})
	}
	want := []row{
		{"empty", 3, 1, 1},
		{"branches", 5, 12, 7},    // 1 + if, &&, ||, else if, for, range
		{"switches", 18, 14, 5},   // 1 + 2 cases + 2 select cases; defaults and empty switches add nothing
		{"(*T).method", 33, 7, 2}, // a literal's if counts toward the function around it
		{"(G).generic", 41, 1, 1},
		{"lit", 43, 4, 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("measures (-want +got):\n%s", diff)
	}
}

// Check fails on each way the rule can be broken, and on nothing else.
func TestCheck(t *testing.T) {
	t.Parallel()
	fn := func(name string, lines, cyc int, doc string) Func {
		return Func{File: "sim/x.go", Line: 1, Name: name, Lines: lines, Complexity: cyc, Doc: doc}
	}
	listed := map[string]Size{"sim/x.go big": {100, 30}, "sim/x.go gone": {90, 10}}
	hot := map[string]string{"sim/x.go loop": "the tick loop"}
	tests := []struct {
		name  string
		funcs []Func
		want  []string // substrings, one per violation
	}{
		{"within", []Func{fn("small", 80, 25, ""), fn("big", 100, 30, ""), fn("gone", 90, 10, ""), fn("loop", 300, 60, "measured: +4 % ns/event when split")}, nil},
		{"a listed offender shrinks", []Func{fn("big", 95, 28, ""), fn("gone", 85, 9, ""), fn("loop", 300, 60, "measured")}, nil},
		{"new offender by lines", []Func{fn("small", 81, 2, ""), fn("big", 100, 30, ""), fn("gone", 90, 10, ""), fn("loop", 1, 1, "measured")},
			[]string{"small: 81 lines, cyclomatic 2: over the limits"}},
		{"new offender by complexity", []Func{fn("small", 10, 26, ""), fn("big", 100, 30, ""), fn("gone", 90, 10, ""), fn("loop", 1, 1, "measured")},
			[]string{"small: 10 lines, cyclomatic 26: over the limits"}},
		{"grows within the limit it was not over", []Func{fn("big", 100, 30, ""), fn("gone", 90, 25, ""), fn("loop", 1, 1, "measured")}, nil},
		{"grows past its size", []Func{fn("big", 101, 31, ""), fn("gone", 90, 26, ""), fn("loop", 1, 1, "measured")},
			[]string{"big: 101 lines, cyclomatic 31: grew", "gone: 90 lines, cyclomatic 26: grew"}},
		{"a listed offender is within now", []Func{fn("big", 80, 25, ""), fn("gone", 90, 10, ""), fn("loop", 1, 1, "measured")},
			[]string{`remove "sim/x.go big" from the offenders`}},
		{"a listed offender is gone", []Func{fn("big", 100, 30, ""), fn("loop", 1, 1, "measured")},
			[]string{"sim/x.go gone: listed as an offender, but no such function"}},
		{"a hot loop without its measurement", []Func{fn("big", 100, 30, ""), fn("gone", 90, 10, ""), fn("loop", 300, 60, "the tick loop")},
			[]string{"loop: 300 lines, cyclomatic 60: a hot loop whose doc comment"}},
		{"a hot loop outside sim", []Func{fn("big", 100, 30, ""), fn("gone", 90, 10, ""), {File: "sim/x.go", Name: "other"}, {File: "cmd/x.go", Name: "loop"}},
			[]string{"sim/x.go loop: listed as a hot loop, but no such function"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bad := Check(tt.funcs, listed, hot)
			if len(bad) != len(tt.want) {
				t.Fatalf("Check = %q, want %d violations like %q", bad, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(bad[i], w) {
					t.Errorf("violation %d: %q, want it to say %q", i, bad[i], w)
				}
			}
		})
	}
}
