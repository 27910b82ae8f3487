package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file of assertions with several bad lines names every one of them,
// file and line, in one error (as a bad sweeps.toml does), not only the
// first.
func TestAssertNamesEveryBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checks.txt")
	src := "# checks\nt99_after_s maxx <= 60\nt99_after_s max <= 60\nt99_aftr_s max <= 60\n\nt99_after_s max => 60\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readAssertions(path)
	if err == nil {
		t.Fatal("three bad lines were accepted")
	}
	for _, want := range []string{path + `:2: statistic "maxx"`, path + `:4: metric "t99_aftr_s"`, path + `:6: comparison "=>"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), ":3:") {
		t.Errorf("error names the good line 3:\n%v", err)
	}
}
