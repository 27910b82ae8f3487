package grid

import (
	"os/exec"
	"strings"
	"testing"
)

// grid is a leaf of the vocabulary: of the module's packages it imports
// sim and internal ones only, so that every stage may import it without
// pulling in the config loader, the dataset or the analysis.
func TestGridImportsSimOnly(t *testing.T) {
	const mod = "github.com/herdsweep/herdsweep/"
	out, err := exec.Command("go", "list", "-deps", mod+"grid").Output()
	if err != nil {
		t.Fatalf("go list -deps grid: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		rest, ours := strings.CutPrefix(p, mod)
		if !ours || rest == "grid" || rest == "sim" || strings.HasPrefix(rest, "internal/") {
			continue
		}
		t.Errorf("grid depends on %s: it may import sim and internal packages only", p)
	}
}
