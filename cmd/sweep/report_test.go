package main

import (
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/internal/golden"
)

var embedded = regexp.MustCompile(`!\[[^\]]*\]\((plots/[^)]+\.png)\)[^\n]*\n\n[^\n]*\(\[SVG\]\((plots/[^)]+\.svg)\)\)`)

// The report through the real path: `sweep run` on a small config writes
// report.md (golden), a page per scenario and every figure it embeds, as
// PNG and SVG; `sweep report` renders the same from the dataset alone.
func TestReportGolden(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000")
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/small.toml", "--out", res, "--quiet")
	md, err := os.ReadFile(filepath.Join(res, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "testdata/report.golden.md", string(md))
	checkEmbedded(t, res, string(md), 6)
	other := filepath.Join(dir, "other")
	mustRun(t, "report", "--results", res, "--out", other)
	again, _ := os.ReadFile(filepath.Join(other, "report.md"))
	if string(again) != string(md) {
		t.Error("report from the dataset differs from the one the run wrote")
	}
}

// A user's own config (one scenario, six policies): every embedded figure
// exists and decodes, and the report speaks of nothing the dataset lacks.
func TestReportOfAUsersConfig(t *testing.T) {
	res := filepath.Join(t.TempDir(), "res")
	out := mustRun(t, "run", "--config", "testdata/six.toml", "--out", res, "--quiet")
	if !strings.Contains(out, "(1 scenario page in ") {
		t.Errorf("run output %q: want one scenario page", out)
	}
	md, err := os.ReadFile(filepath.Join(res, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkEmbedded(t, res, string(md), 4) // ranking, Pareto, herd, recovery
	for _, absent := range []string{"article", "Library defaults", "Mixed fleets", "more than count", "capacity ×"} {
		if strings.Contains(string(md), absent) {
			t.Errorf("report.md mentions %q, which this dataset does not have", absent)
		}
	}
}

func checkEmbedded(t *testing.T, res, md string, atLeast int) {
	t.Helper()
	figs := embedded.FindAllStringSubmatch(md, -1)
	if len(figs) < atLeast || len(figs) != strings.Count(md, "![") {
		t.Errorf("%d figures embedded with their SVG (%d images), want at least %d", len(figs), strings.Count(md, "!["), atLeast)
	}
	for _, m := range figs {
		f, err := os.Open(filepath.Join(res, m[1]))
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", m[1], err)
		}
		f.Close()
		if fi, err := os.Stat(filepath.Join(res, m[2])); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", m[2], err)
		}
	}
	for _, m := range regexp.MustCompile(`\]\((scenarios/[^)]+)\)`).FindAllStringSubmatch(md, -1) {
		if _, err := os.Stat(filepath.Join(res, m[1])); err != nil {
			t.Errorf("report.md links to %s: %v", m[1], err)
		}
	}
}
