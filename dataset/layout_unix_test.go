//go:build unix

package dataset

import (
	"os"
	"syscall"
	"testing"
)

// A named pipe with a part's name is never opened (it would hang every
// reader): List says what it is, on a real folder too.
func TestListLeavesNamedPipes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/runs/sweep=a", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(dir+"/runs/sweep=a/part-x.parquet", 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	os.Symlink("part-x.parquet", dir+"/runs/sweep=a/part-link.parquet")
	os.Symlink("nowhere.parquet", dir+"/runs/sweep=a/part-dangling.parquet")
	l, err := List(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 1 || l.Runs[0].Name != "part-dangling.parquet" {
		t.Errorf("parts: %v, want the dangling link alone (its readers say they cannot open it)", l.Runs)
	}
	if len(l.Other) != 2 || l.Other[0].Kind != Special || l.Other[1].Kind != Special {
		t.Errorf("other: %v, want the pipe and the link to it as special", l.Other)
	}
}
