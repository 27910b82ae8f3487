package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Shard is shard I of N of a sweep (0 ≤ I < N); N ≤ 1 is the whole sweep.
type Shard struct{ I, N int }

// String is the shard as `sweep run --shard` takes it: "I/N", or "all".
func (s Shard) String() string {
	if s.N <= 1 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// tag is the shard as part and lock names carry it: "all" or "IofN".
func (s Shard) tag() string {
	if s.N <= 1 {
		return "all"
	}
	return fmt.Sprintf("%dof%d", s.I, s.N)
}

// writerID names one process writing one shard.
type writerID struct {
	tag   string // "all" or "IofN"
	host  string // the host name, letters and digits only
	space string // PIDSpace
	pid   int
	rand  string
}

// processRand draws a writer's random id.
func processRand() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("store: no random source: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// HostName is this machine's name as part names and locks carry it:
// letters, digits and "_", at most 40 of them.
func HostName() string {
	h, _ := os.Hostname()
	h = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, h)
	if len(h) > 40 {
		h = h[:40]
	}
	if h == "" {
		h = "unknown"
	}
	return h
}

func newWriterID(shard Shard) writerID {
	return writerID{tag: shard.tag(), host: HostName(), space: PIDSpace(), pid: os.Getpid(), rand: processRand()}
}

// partName matches the part names of this protocol: tag, sequence, host,
// pid, random id.
var partName = regexp.MustCompile(`^part-(all|\d+of\d+)-(\d{5,})-([A-Za-z0-9_]+)-(\d+)-([0-9a-f]{8})\.parquet$`)

// tempName matches a temporary file of a part.
var tempName = regexp.MustCompile(`^\.(.+\.parquet)\.\d+\.tmp$`)

// PartName is what a part's name says of its writer.
type PartName struct {
	Tag  string // "all" or the shard "IofN"
	Seq  int    // the writer's sequence number of the part
	Host string
	PID  int
	Rand string // the writer's random id
}

// ParsePartName parses the writer out of a part's or its temporary file's
// name; ok is false for names of older versions of herdsweep and names not
// ours.
func ParsePartName(name string) (p PartName, ok bool) {
	if m := tempName.FindStringSubmatch(name); m != nil {
		name = m[1]
	}
	m := partName.FindStringSubmatch(name)
	if m == nil {
		return PartName{}, false
	}
	seq, _ := strconv.Atoi(m[2])
	pid, _ := strconv.Atoi(m[4])
	return PartName{Tag: m[1], Seq: seq, Host: m[3], PID: pid, Rand: m[5]}, true
}

// SweepDir is the folder of a sweep's parts of a table in the dataset root.
func SweepDir(root, table, sweep string) string {
	return join(root, table, "sweep="+sweep)
}
