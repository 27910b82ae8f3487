package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// A report's temporary files name their writer, so that the next report
// into the same folder removes those of a writer that is gone (a report
// killed while it wrote): .NAME.report-HOST-SPACE-PID-RANDOM.tmp, SPACE
// the first 8 hex digits of the hash of PIDSpace ("none" where unknown).
var reportTempName = regexp.MustCompile(`^\.(.+)\.report-([A-Za-z0-9_]+)-([0-9a-f]{8}|none)-(\d+)-\d+\.tmp$`)

// ReportTemp is the pattern of this process's temporary files of a
// report, for WriteFileAs (os.CreateTemp after "."+NAME+".").
func ReportTemp() string { return reportTemp(os.Getpid()) }

// reportTemp is ReportTemp of the process pid of this host and pid space.
func reportTemp(pid int) string {
	return fmt.Sprintf("report-%s-%s-%d-*.tmp", HostName(), spaceHash(PIDSpace()), pid)
}

func spaceHash(space string) string {
	if space == "" {
		return "none"
	}
	h := sha256.Sum256([]byte(space))
	return hex.EncodeToString(h[:4])
}

// CleanReportTemps removes from dir the temporary files of reports whose
// writer is gone, naming each to note: of this host and pid space, and no
// process has its id (or this one does, which was not writing them).
// Others are left alone: nothing tells whether their writer is alive.
func CleanReportTemps(dir string, note func(string)) {
	if IsObject(dir) {
		return // a report writes its objects whole: it leaves none
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	host, space := HostName(), spaceHash(PIDSpace())
	for _, e := range es {
		m := reportTempName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() || m[2] != host || m[3] != space || space == "none" {
			continue
		}
		pid, err := strconv.Atoi(m[4])
		if err != nil || pid != os.Getpid() && pidAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		note(fmt.Sprintf("removing %s: a temporary file of a report that is gone (pid %d)", p, pid))
		os.Remove(p)
	}
}
