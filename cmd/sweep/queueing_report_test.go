package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/reports"
)

// The queueing section through the real path: `sweep run` streams the
// dataset (analysis.Scan, which reads no queueing metric) and reads the
// queueing cells' runs again whole; its queueing.md and report.md's
// section are those built from every record loaded at once.
func TestReportRanksQueueingCells(t *testing.T) {
	res := filepath.Join(t.TempDir(), "res")
	mustRun(t, "run", "--config", "testdata/queueing.toml", "--out", res, "--quiet")
	page, err := os.ReadFile(filepath.Join(res, reports.QueueingPage))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(res, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := analysis.Load(folder(res))
	if err != nil {
		t.Fatal(err)
	}
	r, err := reports.Build(context.Background(), reports.Input{Dataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Queueing) != 8 {
		t.Fatalf("%d queueing scenarios ranked, want 8", len(r.Queueing))
	}
	var want, wantMD bytes.Buffer
	for _, f := range r.Files() {
		switch f.Name {
		case reports.QueueingPage:
			err = f.Write(&want)
		case "report.md":
			err = f.Write(&wantMD)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(page) != want.String() {
		t.Errorf("queueing.md through sweep run differs from the one built from every record:\n%s\nwant\n%s", page, want.String())
	}
	section := func(s string) string {
		_, s, _ = strings.Cut(s, "## Queueing servers")
		s, _, _ = strings.Cut(s, "\n## ")
		return s
	}
	if got := section(string(md)); got == "" || got != section(wantMD.String()) {
		t.Errorf("report.md's queueing section through sweep run:\n%s\nwant\n%s", got, section(wantMD.String()))
	}
	if strings.Contains(string(md), "does not rank") || strings.Contains(string(md), "not ranked") {
		t.Error("report.md says queueing cells are not ranked")
	}
}
