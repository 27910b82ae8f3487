package experiments

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A config loads the same on one goroutine as on several (expand builds a
// grid's cells a chunk at a time on every core, then takes them in
// order): the repository's sweeps, a grid of 1,200 cells, and one of 500
// whose cells are refused in the first chunk and in the second (a run too
// large for the memory limit), in cells and in errors alike.
func TestExpandIsTheSameOnEveryCore(t *testing.T) {
	t.Parallel()
	repo, err := os.ReadFile("../sweeps.toml")
	if err != nil {
		t.Fatal(err)
	}
	bad := "[sweep.big]\nseeds = 1\npolicy = [\"full-jitter\", \"decorrelated\"]\nrecover_s = {from = 10, to = 50, step = 10}\ncapacity_rps = {from = 10, to = 250, step = 10}\nclients = [2000, 3000000]\n"
	some := "[sweep.some]\nseeds = 1\npolicy = \"full-jitter\"\ncapacity_rps = {from = 10, to = 309}\nclients = [20, 2000]\nwindow_s = [60, 600]\n"
	for _, c := range []struct {
		name string
		src  []byte
		lim  Limits
	}{
		{"sweeps.toml", repo, Limits{}},
		{"refused cells", []byte(bad), Limits{Total: 64 << 20, Workers: 2}},
		{"300 × 4 cells", []byte(some), Limits{}},
	} {
		if testing.Short() && c.name == "sweeps.toml" {
			continue // 1 s a load; the race step runs the others
		}
		one, err1 := load("c.toml", c.src, c.lim, 1)
		for _, cores := range []int{3} {
			many, err := load("c.toml", c.src, c.lim, cores)
			if fmt.Sprint(err) != fmt.Sprint(err1) {
				t.Errorf("%s on %d goroutines: %v\non one: %v", c.name, cores, err, err1)
			}
			if diff := cmp.Diff(one, many, cmp.AllowUnexported(Config{}, Sweep{})); diff != "" {
				t.Errorf("%s on %d goroutines: the config differs from one's (-one +many):\n%s", c.name, cores, diff)
			}
		}
		if (c.name == "refused cells") != (err1 != nil) {
			t.Errorf("%s: %v", c.name, err1)
		}
	}
}

// A grid's cells come in the order of its parameters (grid.Params), the
// last the fastest, whatever the chunks they were built in: here 1,200,
// against the same cells made one by one.
func TestExpandKeepsTheGridsOrder(t *testing.T) {
	t.Parallel()
	src := "[sweep.some]\nseeds = 1\npolicy = \"full-jitter\"\ncapacity_rps = {from = 10, to = 309}\nclients = [20, 2000]\nwindow_s = [60, 600]\n"
	cfg, err := load("c.toml", []byte(src), Limits{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, clients := range []int64{20, 2000} {
		for capacity := 10; capacity <= 309; capacity++ {
			for _, window := range []float64{60, 600} {
				c := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.FullJitter)}
				grid.ParamByKey("clients").Apply(&c, clients)
				grid.ParamByKey("capacity_rps").Apply(&c, float64(capacity))
				grid.ParamByKey("window_s").Apply(&c, window)
				want = append(want, c.Normalize().Key())
			}
		}
	}
	var got []string
	for _, c := range cfg.Sweeps[0].Cells {
		got = append(got, c.Key())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells of the grid (-in order +loaded):\n%s", diff)
	}
}
