package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// assert exits 0 when every assertion holds, 1 when one is violated (or
// matches nothing), 2 on a bad line, naming its file and line.
func TestAssertExitCodes(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", res, "--quiet", "--no-report")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	holds := write("holds.assert", "# every cell served everyone\ngave_up max <= 0\n\nt99_after_s max <= 600 where policy=decorrelated capacity_rps=30\n")
	fails := write("fails.assert", "t99_after_s max <= 0.1 where policy=decorrelated\n")
	none := write("none.assert", "t99_after_s max <= 600 where capacity_rps=31\n")
	bad := write("bad.assert", "gave_up max <= 0\nt99_after_s max <= 60 where capacity=30\n")
	if out := mustRun(t, "assert", "--results", res, holds); !strings.Contains(out, "2 of 2 assertions hold") {
		t.Errorf("holds:\n%s", out)
	}
	one := write("one.assert", "gave_up max <= 0\n")
	if out := mustRun(t, "assert", "--results", res, one); !strings.Contains(out, "1 of 1 assertion holds") {
		t.Errorf("one:\n%s", out)
	}
	for _, tt := range []struct {
		file string
		code int
		want string
	}{
		{fails, 1, "FAIL " + fails + ":1: t99_after_s max <= 0.1"},
		{none, 1, "matches no cell of the dataset"},
		{bad, 2, bad + `:2: column "capacity" (did you mean "capacity_rps"?): want a parameter's column`},
	} {
		stdout, stderr, code := sweep(t, "assert", "--results", res, tt.file)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", tt.file, code, tt.code, tt.want, stdout, stderr)
		}
	}
	stdout, _, code := sweep(t, "assert", "--results", res, "--json", holds, fails)
	var doc struct {
		OK       bool `json:"ok"`
		Violated int  `json:"violated"`
		Results  []struct {
			Line       int               `json:"line"`
			OK         bool              `json:"ok"`
			Cells      int               `json:"cells"`
			Violations []json.RawMessage `json:"violations"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 1 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, stdout)
	}
	if doc.OK || doc.Violated != 1 || len(doc.Results) != 3 || !doc.Results[0].OK || doc.Results[1].Line != 4 || doc.Results[2].OK || len(doc.Results[2].Violations) != doc.Results[2].Cells {
		t.Errorf("--json: %+v", doc)
	}
}
