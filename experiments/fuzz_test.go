package experiments

import (
	"os"
	"strings"
	"testing"
)

// FuzzLoad: whatever the bytes, Load returns a config or an error naming
// the file, and never panics; a config's cells are all valid.
func FuzzLoad(f *testing.F) {
	if src, err := os.ReadFile("../sweeps.toml"); err == nil {
		f.Add(string(src))
	}
	f.Add(base + "[sweep.s]\npolicy = [\"fixed\", {kind = \"http-retry\", width = 0.2}]\nwidth = {from = 0, to = 1, step = 0.25}\n")
	f.Add("[sweep.s]\nexperiment = \"article\"\n[[sweep.s.cell]]\npolicy = \"decorrelated\"\n")
	f.Add("[defaults]\nseeds = {from = 1, to = 3}\n[sweep.x]\npolicy = \"exponential\"\ncap_s = 0\n")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 || strings.Count(src, "from") > 3 {
			return // keep grids small: the fuzzer is after parsing, not throughput
		}
		cfg, err := Load("f.toml", []byte(src))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.toml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, s := range cfg.Sweeps {
			if len(s.Seeds) == 0 || len(s.Cells) == 0 {
				t.Fatalf("sweep %s: %d cells, %d seeds", s.Name, len(s.Cells), len(s.Seeds))
			}
			for _, c := range s.Cells[:min(len(s.Cells), 50)] {
				if err := c.Validate(); err != nil {
					t.Fatalf("invalid cell %s: %v", c.Label(), err)
				}
			}
		}
	})
}
