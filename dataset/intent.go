package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// An intent is what a `sweep run` meant a sweep's folder to hold, recorded
// when it starts: every run of the sweep, of every shard (rolling seeds
// included), by cell and seed. It is the file
//
//	runs/sweep=NAME/_intent.HASH.json
//
// where HASH is the first 16 hex digits of the SHA-256 of its bytes: the
// same plan gives the same file, so the shards of one job write one file
// (each tries once, create-only; finding it there is success), a nightly
// job that changes nothing adds nothing, and a changed config adds one.
// Nothing rewrites or removes an intent: a create-only store (S3 with
// If-None-Match) needs no rename for it. Its name starts with "_", so no
// reader takes it for data.
//
// A dataset that lacks runs one of its intents asks for is incomplete: a
// shard that never ran, or died, or whose parts were deleted. `sweep check`
// names the runs (and the shards) missing, `sweep compare` and `sweep
// assert` fail on cells with fewer seeds than asked. An intent applies to
// a dataset while some runs part of its sweep holds its simulator version,
// or no runs part of its sweep is there at all: after a simulator upgrade
// set the old parts aside and the sweep was run again, the old intent no
// longer applies (the new run wrote its own).
type Intent struct {
	Format     string       `json:"format"` // IntentFormat
	Sweep      string       `json:"sweep"`
	Sim        string       `json:"sim_version"`
	Queue      string       `json:"queue_version"` // sim.QueueVersion: the keys of queueing cells hash it
	ConfigHash string       `json:"config_sha256"`
	Command    string       `json:"command"` // the command that runs the sweep, without --shard
	Shards     int          `json:"shards"`  // the shards the sweep is run in; 1: unsharded
	Runs       int          `json:"runs"`    // runs in all: the cells' seeds
	Cells      []IntentCell `json:"cells"`
}

// IntentFormat is the version of the intent file's format.
const IntentFormat = "herdsweep-intent/1"

// IntentCell is a cell an intent asks for, and its seeds.
type IntentCell struct {
	Key    string `json:"cell_key"` // the runs table's cell_key
	Label  string `json:"label"`
	Params string `json:"params"` // grid.Cell.Canonical: the run keys hash it
	Seeds  string `json:"seeds"`  // ascending, runs of consecutive seeds as ranges: "1-40,45"
}

// IsIntent reports whether name is an intent's file name.
func IsIntent(name string) bool {
	return strings.HasPrefix(name, "_intent.") && strings.HasSuffix(name, ".json")
}

// Encode returns the intent's file: its name and its bytes, JSON with a
// cell to a line.
func (in Intent) Encode() (name string, b []byte, err error) {
	in.Format = IntentFormat
	cells := in.Cells
	in.Cells = nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return "", nil, err
	}
	// {"format":…,"cells":null}\n → {"format":…,"cells":[\n{…},\n{…}\n]}\n
	buf.Truncate(buf.Len() - len("null}\n"))
	buf.WriteString("[")
	for i, c := range cells {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
		if err := enc.Encode(c); err != nil {
			return "", nil, err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteString("\n]}\n")
	return intentName(buf.Bytes()), buf.Bytes(), nil
}

func intentName(b []byte) string {
	h := sha256.Sum256(b)
	return "_intent." + hex.EncodeToString(h[:8]) + ".json"
}

// ParseIntent reads the intent file name holding b, checking that b is the
// file its name was given for (not torn, not edited) and well formed.
func ParseIntent(name string, b []byte) (Intent, error) {
	var in Intent
	if want := intentName(b); want != name {
		return in, fmt.Errorf("its content is not what its name was written for (its content would be named %s): damaged, or edited", want)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("not an intent: %v", err)
	}
	if in.Format != IntentFormat {
		return in, fmt.Errorf("format %q: want %q (written by another version of herdsweep?)", in.Format, IntentFormat)
	}
	if in.Shards < 1 {
		return in, fmt.Errorf("shards %d: want 1 or more", in.Shards)
	}
	runs := 0
	for i, c := range in.Cells {
		seeds, err := ParseSeeds(c.Seeds)
		if err != nil {
			return in, fmt.Errorf("cell %d (%s): seeds %q: %v", i, c.Label, c.Seeds, err)
		}
		runs += len(seeds)
	}
	if runs != in.Runs {
		return in, fmt.Errorf("its cells hold %d runs, it says %d", runs, in.Runs)
	}
	return in, nil
}

// ReadIntent reads and checks the intent at p (slash-separated, in fsys);
// its errors do not name the file.
func ReadIntent(fsys fs.FS, p string) (Intent, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return Intent{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return Intent{}, errors.New("not a regular file")
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return Intent{}, err
	}
	return ParseIntent(path.Base(p), buf.Bytes())
}

// FormatSeeds writes ascending seeds with runs of consecutive ones as
// ranges: 1, 2, 3, 7 → "1-3,7".
func FormatSeeds(seeds []uint32) string {
	var b strings.Builder
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(seeds[i]), 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(seeds[j]), 10))
		}
		i = j + 1
	}
	return b.String()
}

// ParseSeeds reads FormatSeeds's form: strictly ascending seeds.
func ParseSeeds(s string) ([]uint32, error) {
	var out []uint32
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q: want a seed or a range FROM-TO", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 32); err != nil || b <= a {
				return nil, fmt.Errorf("%q: want a range FROM-TO with FROM < TO", part)
			}
		}
		if n := len(out); n > 0 && uint32(a) <= out[n-1] {
			return nil, fmt.Errorf("%q: seeds not ascending", part)
		}
		if len(out)+int(b-a) >= 1<<24 {
			return nil, errors.New("more than 16,777,216 seeds in a cell")
		}
		for x := a; x <= b; x++ {
			out = append(out, uint32(x))
		}
	}
	return out, nil
}

// Cell is the cell the intent asks for, built from its parameters: the
// cell whose Canonical form they are (an error if no cell has that form).
func (c IntentCell) Cell() (grid.Cell, error) {
	vals := map[string]string{}
	for s := c.Params; s != ""; {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return grid.Cell{}, fmt.Errorf("params: %q: want KEY=VALUE", s)
		}
		v := rest
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return grid.Cell{}, fmt.Errorf("params: %s: %v", k, err)
			}
			v = q
		} else if i := strings.IndexByte(rest, ' '); i >= 0 {
			v = rest[:i]
		}
		vals[k] = v
		s = strings.TrimPrefix(rest[len(v):], " ")
	}
	cell := grid.Cell{Scenario: sim.Article()}
	for i := range grid.Params {
		p := &grid.Params[i]
		text, ok := vals[p.Key]
		delete(vals, p.Key)
		v, err := paramValue(p.Type, text, ok)
		if err != nil {
			return grid.Cell{}, fmt.Errorf("params: %s: %v", p.Key, err)
		}
		p.Set(&cell, v)
	}
	if len(vals) > 0 {
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return grid.Cell{}, fmt.Errorf("params: unknown %s (written by another version of herdsweep?)", strings.Join(keys, ", "))
	}
	if got := cell.Canonical(); got != c.Params {
		return grid.Cell{}, fmt.Errorf("params: no cell has them (read back as %q)", got)
	}
	return cell, nil
}

// paramValue reads a parameter's value as Canonical writes it; one left
// out (ok false) is its type's zero, which Canonical leaves out.
func paramValue(t grid.Type, s string, ok bool) (any, error) {
	switch t {
	case grid.Int:
		if !ok {
			return int64(0), nil
		}
		return strconv.ParseInt(s, 10, 64)
	case grid.Float:
		if !ok {
			return 0.0, nil
		}
		return strconv.ParseFloat(s, 64)
	case grid.String:
		if !ok {
			return "", nil
		}
		return strconv.Unquote(s)
	}
	if !ok {
		return false, nil
	}
	return strconv.ParseBool(s)
}

// Plan is what the intents of a dataset that apply to it ask for: each
// cell once, its seeds the union of theirs, in the order of the intents
// (by path) and their cells.
type Plan struct {
	Intents []PlanIntent
	Cells   []PlannedCell
}

// PlanIntent is an intent of the plan, where it is.
type PlanIntent struct {
	Path string // slash-separated, in the dataset
	Intent
}

// PlannedCell is a cell the plan asks for.
type PlannedCell struct {
	IntentCell
	Sweep   string
	Seeds   []uint32 // ascending
	Intents []int    // indices in Plan.Intents of those that ask for it
}

// ReadPlan reads the intents l lists and keeps those that apply: sims
// gives, by sweep, the simulator versions of its runs parts (see Intent).
// An intent that cannot be read is an error naming it (a *PathError).
func ReadPlan(fsys fs.FS, l *Listing, sims map[string][]string) (*Plan, error) {
	p := &Plan{}
	at := map[string]int{} // sweep + cell key → index in Cells
	for _, part := range l.Intents {
		in, err := ReadIntent(fsys, part.Path())
		if err != nil {
			return nil, &fs.PathError{Op: "reading intent", Path: part.Path(), Err: err}
		}
		if vs := sims[part.Sweep]; len(vs) > 0 && !slices.Contains(vs, in.Sim) {
			continue
		}
		ii := len(p.Intents)
		p.Intents = append(p.Intents, PlanIntent{part.Path(), in})
		for _, c := range in.Cells {
			seeds, _ := ParseSeeds(c.Seeds) // checked by ReadIntent
			k := part.Sweep + "/" + c.Key
			j, ok := at[k]
			if !ok {
				at[k] = len(p.Cells)
				p.Cells = append(p.Cells, PlannedCell{IntentCell: c, Sweep: part.Sweep, Seeds: seeds, Intents: []int{ii}})
				continue
			}
			pc := &p.Cells[j]
			pc.Intents = append(pc.Intents, ii)
			if !slices.Equal(pc.Seeds, seeds) {
				pc.Seeds = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(pc.Seeds), seeds...))))
			}
		}
	}
	return p, nil
}
