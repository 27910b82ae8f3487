package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A report's temporary files are named as the next report looks for them,
// and it removes those of a report that is gone, naming each, and nothing
// else: not a report's at work, not another host's, not a file not named
// as a report names its own.
func TestCleanReportTemps(t *testing.T) {
	if spaceHash(PIDSpace()) == "none" {
		t.Skip("no pid space here: a report cannot tell whether another is alive")
	}
	if name := ".report.md." + strings.Replace(ReportTemp(), "*", "42", 1); !reportTempName.MatchString(name) {
		t.Errorf("this report's temporary files (%s) are not named as the next one looks for them", ReportTemp())
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name := func(pattern string) string {
		return filepath.Join(dir, ".t99.png."+strings.Replace(pattern, "*", "7", 1))
	}
	dead, own := name(reportTemp(gone.Process.Pid)), name(ReportTemp())
	keep := []string{
		name(reportTemp(os.Getppid())), // a report at work
		filepath.Join(dir, fmt.Sprintf(".t99.png.report-elsewhere-%s-%d-7.tmp", spaceHash(PIDSpace()), gone.Process.Pid)),
		filepath.Join(dir, ".report.md.5678.tmp"),
	}
	for _, p := range append([]string{dead, own}, keep...) {
		plant(t, p, []byte("x"), time.Hour)
	}
	var said []string
	CleanReportTemps(dir, func(msg string) { said = append(said, msg) })
	want := []string{
		fmt.Sprintf("removing %s: a temporary file of a report that is gone (pid %d)", dead, gone.Process.Pid),
		fmt.Sprintf("removing %s: a temporary file of a report that is gone (pid %d)", own, os.Getpid()),
	}
	if strings.Join(said, "\n") != strings.Join(want, "\n") && strings.Join(said, "\n") != want[1]+"\n"+want[0] {
		t.Errorf("said %q, want %q", said, want)
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	for _, p := range []string{dead, own} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}
