package grid

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/herdsweep/herdsweep/sim"
)

// Key is the cell's stable identity: a hash of the simulator's version
// (keyVersion) and every parameter. Two cells that behave the same (after sim.Policy.Normalize)
// have the same key.
func (c Cell) Key() string {
	can := c.Canonical()
	h := sha256.Sum256([]byte(versionOf(c) + "\x00" + can))
	return hex.EncodeToString(h[:8])
}

// keyVersion is the simulator's version a key is computed with: sim.Version,
// and for a queueing cell (sim.Scenario.Server) sim.QueueVersion too, so
// that a change to the queueing server moves the keys of queueing cells
// only; and for a cell with a policy that sim.PolicyVersion revised
// (sim.Policy.Revised, in any group) that version too, so that only those
// cells' keys move; and for a cell with services in front of its server
// (Chained) sim.ChainVersion. It reads the cell back from the canonical form, so
// that every caller of RunKey keys alike. The last answer is kept: a
// dataset's writer and checker key every seed of a cell in a row.
func keyVersion(canonical string) string {
	if last := lastVersion.Load(); last != nil && last.canonical == canonical {
		return last.version
	}
	v := versionOf(cellOfCanonical(canonical))
	lastVersion.Store(&versionAnswer{canonical, v})
	return v
}

// versionOf is keyVersion of c's canonical form, asked of c itself (what
// Key does, without reading c back: TestVersionOfIsOfTheCanonicalForm).
func versionOf(c Cell) string {
	v := sim.Version
	if c.Scenario.Server() == sim.QueueingServer {
		v += "+" + sim.QueueVersion
	}
	revised := false
	for _, g := range c.Groups() {
		revised = revised || g.Policy.Revised()
	}
	if revised {
		v += "+" + sim.PolicyVersion
	}
	if c.Chained() {
		v += "+" + sim.ChainVersion
	}
	return v
}

type versionAnswer struct {
	canonical, version string
}

var lastVersion atomic.Pointer[versionAnswer]

// cellOfCanonical reads a cell back from canonical, as Canonical wrote it:
// key=value separated by spaces, a text quoted. A pair it cannot read is
// left out: canonical comes from Canonical, not from a user.
func cellOfCanonical(canonical string) Cell {
	var c Cell
	for rest := canonical; rest != ""; {
		k, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		var raw string
		if strings.HasPrefix(after, `"`) {
			q, err := strconv.QuotedPrefix(after)
			if err != nil {
				break
			}
			raw, rest = q, after[len(q):]
		} else {
			raw, rest, _ = strings.Cut(after, " ")
		}
		rest = strings.TrimPrefix(rest, " ")
		if p := ParamByKey(k); p != nil {
			if v, err := parseValue(p.Type, raw); err == nil {
				p.Set(&c, v)
			}
		}
	}
	return c
}

// Validate checks the cell's scenario, policy and fleet.
func (c Cell) Validate() error {
	if err := c.Scenario.Validate(); err != nil {
		return err
	}
	if err := c.Policy.Validate(); err != nil {
		return err
	}
	if c.Mixed() {
		if err := sim.ValidateFleet(c.Groups()); err != nil {
			return err
		}
	}
	return c.validateChain()
}

// Simulate runs the cell on s with rng: one policy, a mixed fleet, or a
// chain of services in front of the server.
func (c Cell) Simulate(s *sim.Sim, rng *sim.Mulberry32, tl *sim.Timeline) (sim.Result, error) {
	if c.Mixed() {
		return s.RunFleet(c.Scenario, c.Groups(), rng, tl)
	}
	if c.Chained() {
		ch, err := c.Chain()
		if err != nil {
			return sim.Result{}, err
		}
		return s.RunChain(c.Scenario, ch, c.Policy, rng, tl)
	}
	return s.Run(c.Scenario, c.Policy, rng, tl)
}

// Label names the cell for people: the policy in words, then the scenario
// parameters that differ from the article's.
func (c Cell) Label() string {
	parts := []string{c.Policy.Describe()}
	if c.Mixed() {
		gs := c.Groups()
		parts[0] = fmt.Sprintf("%.0f%% %s", 100*gs[0].Share, parts[0])
		for _, g := range gs[1:] {
			parts = append(parts, fmt.Sprintf("%.0f%% %s", 100*g.Share, g.Policy.Describe()))
		}
	}
	a := Cell{Scenario: sim.Article(), Policy: c.Policy, Mix: c.Mix}
	for i := range Params {
		p := &Params[i]
		if p.Policy {
			continue
		}
		if v := p.get(&c); v != p.get(&a) {
			parts = append(parts, fmt.Sprintf("%s=%v", p.Key, v))
		}
	}
	return strings.Join(parts, "; ")
}

// Run is a cell with one seed.
type Run struct {
	Cell
	Seed uint32
}

// Key is the run's stable identity: the cell's key and the seed.
func (r Run) Key() string { return RunKey(r.Cell.Canonical(), r.Seed) }

// RunKey is Run{Cell: c, Seed: seed}.Key() for the cell c whose
// Canonical() is canonical: for callers that key many seeds of one cell
// (the dataset's writer) without building its canonical form each time.
func RunKey(canonical string, seed uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], seed)
	h := sha256.Sum256([]byte(keyVersion(canonical) + "\x00" + canonical + "\x00" + string(b[:])))
	return hex.EncodeToString(h[:8])
}

// Shard says which of n shards the run belongs to: a hash of its key, so
// that membership does not move when cells or seeds are added to a sweep.
func (r Run) Shard(n int) int { return KeyShard(r.Key(), n) }

// KeyShard is Run.Shard of the run whose key is key.
func KeyShard(key string, n int) int {
	h := sha256.Sum256([]byte(key))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}

// Normalize returns c with its policy normalized (sim.Policy.Normalize),
// and without a chain's fanout when it has no layers (it means nothing
// then).
func (c Cell) Normalize() Cell {
	c.Policy = c.Policy.Normalize()
	if c.Layers == "" {
		c.Fanout = 0
	}
	return c
}
