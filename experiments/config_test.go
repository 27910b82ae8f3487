package experiments

import (
	"os"
	"testing"
)

func TestLoadRepositorySweeps(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../sweeps.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load("sweeps.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Sweeps {
		t.Logf("%s: %d cells × %d seeds = %d runs", s.Name, len(s.Cells), len(s.Seeds), s.Len())
	}
}
