package live

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// goModRequires reads the module versions ../go.mod requires.
func goModRequires(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	req := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && strings.HasPrefix(fields[1], "v") && strings.Contains(fields[0], ".") {
			req[fields[0]] = fields[1]
		}
	}
	return req
}

// TestDriversRunGoModsVersions: the library a driver runs is the version
// go.mod requires, and the preset that models it cites that version. An
// upgrade in go.mod fails here, naming the preset to check and update.
func TestDriversRunGoModsVersions(t *testing.T) {
	req := goModRequires(t)
	for _, d := range Drivers() {
		if d.stepped {
			continue
		}
		path, _, _ := strings.Cut(d.Module, "@")
		v, ok := req[path]
		if !ok {
			t.Errorf("driver %s runs %s, which go.mod does not require", d.Name, path)
			continue
		}
		if d.Preset == "" {
			continue
		}
		pr, ok := sim.PresetByName(d.Preset)
		if !ok {
			t.Errorf("driver %s: no preset %s", d.Name, d.Preset)
			continue
		}
		if !strings.Contains(pr.Source, v) {
			t.Errorf("go.mod requires %s %s, but preset %s (sim/presets.go), which models driver %s, cites %q: run `sweep live --virtual --library %s --runs 10` on this version and update the preset to what the library does now",
				path, v, d.Preset, d.Name, pr.Source, d.Name)
		}
	}
}
