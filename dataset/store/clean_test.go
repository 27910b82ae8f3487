package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/dataset"
)

// A writer that commits its part and gives up its lock while another
// cleans is not gone with its part: the cleaner listed the side part as
// uncommitted, then read the locks after the writer had finished. It keeps
// the side part only once it looks again for the runs part (before, four
// shards under the race detector lost a part's timelines this way).
func TestCleanSparesAPartCommittedWhileItLooked(t *testing.T) {
	root := t.TempDir()
	runs := filepath.Join(root, dataset.RunsDir, "sweep=a")
	side := filepath.Join(root, dataset.TimelinesDir, "sweep=a")
	name := "part-1of2-00003-elsewhere-77-11ecc0de.parquet"
	plant(t, filepath.Join(side, name), []byte("side rows"), 0)
	lock := filepath.Join(runs, "_lock.1of2")
	plant(t, lock, []byte("host=elsewhere\nspace=x/1\npid=77\nid=11ecc0de\nshard=1of2\n"), 0)
	cleanListedHook = func() { // the other writer commits its runs part and finishes
		plant(t, filepath.Join(runs, name), []byte("runs rows"), 0)
		os.Remove(lock)
	}
	defer func() { cleanListedHook = nil }()
	var notes []string
	// Shard 0 of 2: the other writer's lock does not stop it.
	w, err := Open(Options{Root: root, Sweep: "a", Shard: Shard{I: 0, N: 2}, Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if s := strings.Join(notes, "\n"); strings.Contains(s, "removing") {
		t.Errorf("clean removed a part committed meanwhile:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(side, name)); err != nil || !bytes.Equal(b, []byte("side rows")) {
		t.Errorf("the committed side part: %q, %v", b, err)
	}
}
