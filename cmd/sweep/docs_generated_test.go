package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/golden"
	"github.com/herdsweep/herdsweep/internal/num"
)

var (
	genStartRe = regexp.MustCompile(`^<!-- generated: (\S+) -->$`)
	genEnd     = "<!-- end generated -->"
)

// generators print each generated table from its owner.
var generators = map[string]func(t *testing.T, root string) string{
	"schema":      func(t *testing.T, _ string) string { return mustSweep(t, "schema", "--markdown") },
	"commands":    commandTable,
	"config-keys": configKeysTable,
	"sweeps":      sweepsTable,
	"families":    func(t *testing.T, _ string) string { return policyTable(t, "families") },
	"presets":     func(t *testing.T, _ string) string { return policyTable(t, "presets") },
	"retry-on":    func(t *testing.T, _ string) string { return policyTable(t, "retry_on") },
	"components":  func(t *testing.T, _ string) string { return policyTable(t, "components") },
}

func mustSweep(t *testing.T, args ...string) string {
	t.Helper()
	var o, e bytes.Buffer
	if err := run(context.Background(), args, &o, &e); err != nil {
		t.Fatalf("sweep %s: %v\n%s", strings.Join(args, " "), err, e.String())
	}
	return o.String()
}

// checkGenerated compares each generated table of f with its generator's
// output (under -update, rewrites it in f.lines).
func checkGenerated(t *testing.T, root, rel string, f *mdFile) {
	t.Helper()
	for i := 0; i < len(f.lines); i++ {
		m := genStartRe.FindStringSubmatch(f.lines[i])
		if m == nil || !f.prose[i] {
			continue
		}
		end := slices.Index(f.lines[i+1:], genEnd)
		if end < 0 {
			t.Errorf("%s:%d: %q without %q", rel, i+1, f.lines[i], genEnd)
			return
		}
		end += i + 1
		gen := generators[m[1]]
		if gen == nil {
			t.Errorf("%s:%d: no generator %q: want one of %v", rel, i+1, m[1], slices.Sorted(maps.Keys(generators)))
			continue
		}
		want := strings.TrimSpace(gen(t, root))
		got := strings.TrimSpace(strings.Join(f.lines[i+1:end], "\n"))
		if got != want {
			if golden.Update() {
				table := append(append([]string{""}, strings.Split(want, "\n")...), "")
				if err := f.parse(slices.Replace(f.lines, i+1, end, table...)); err != nil {
					t.Fatal(err)
				}
				i += len(table)
				continue
			}
			t.Errorf("%s:%d: the generated table %q is not what its owner says (-doc +owner; go test -run TestDocs -update rewrites it):\n%s",
				rel, i+1, m[1], cmp.Diff(got, want))
		}
	}
}

// cell escapes a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// commandTable is the command list of `sweep help`, each with the usage
// line of its -h.
func commandTable(t *testing.T, _ string) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range commands() {
		help := mustSweep(t, c.name, "-h")
		usage, _, _ := strings.Cut(help, "\n")
		usage = strings.TrimPrefix(usage, "Usage: ")
		if u, _, ok := strings.Cut(usage, "   ("); ok { // "(two dataset folders)"
			usage = u
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", cell(usage), cell(c.summary))
	}
	return b.String()
}

// configKeysTable lists the parameters sweeps.toml takes, scenario then
// policy, from the parameter table that the loader and the dataset share.
func configKeysTable(t *testing.T, _ string) string {
	var b strings.Builder
	for _, policy := range []bool{false, true} {
		if policy {
			b.WriteString("\nThe clients' policy and its client components:\n\n")
		} else {
			b.WriteString("The scenario (the fleet and the server):\n\n")
		}
		b.WriteString("| key | value | meaning |\n|---|---|---|\n")
		for _, p := range grid.Params {
			if p.Policy != policy || p.Key == "preset" {
				continue
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", p.Key, p.Type, cell(p.Doc))
		}
	}
	return b.String()
}

// sweepsTable lists the sweeps of the repository's sweeps.toml with their
// cells, seeds and runs, as the loader expands them.
func sweepsTable(t *testing.T, root string) string {
	path := filepath.Join(root, "sweeps.toml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := experiments.Load("sweeps.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| sweep | what | cells | seeds | runs |\n|---|---|--:|--:|--:|\n")
	for _, s := range cfg.Sweeps {
		name := "`" + s.Name + "`"
		if s.OnDemand {
			name += " (on demand)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, cell(s.Description),
			num.Int(len(s.Cells)), num.Int(len(s.Seeds)), num.Int(s.Len()))
	}
	return b.String()
}

// policyTable renders one list of `sweep policies --json`.
func policyTable(t *testing.T, list string) string {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(mustSweep(t, "policies", "--json")), &raw); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(raw[list], &rows); err != nil || len(rows) == 0 {
		t.Fatalf("policies --json: %q: %d rows, %v", list, len(rows), err)
	}
	str := func(v any) string {
		switch v := v.(type) {
		case nil:
			return ""
		case string:
			return v
		case []any:
			var s []string
			for _, x := range v {
				s = append(s, fmt.Sprint(x))
			}
			return strings.Join(s, ", ")
		}
		return fmt.Sprint(v)
	}
	code := func(s string) string {
		if s == "" {
			return `""`
		}
		return "`" + s + "`"
	}
	var b strings.Builder
	switch list {
	case "families":
		b.WriteString("| family | what | delay | parameters | defaults | source |\n|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` | %s |\n", str(r["kind"]), cell(str(r["title"])), cell(str(r["formula"])),
				cell(str(r["params"])), str(r["defaults"]), cell(str(r["source"])))
		}
	case "presets":
		b.WriteString("| preset | what it does | read from |\n|---|---|---|\n")
		for _, r := range rows {
			what := str(r["plain"])
			if n := str(r["note"]); n != "" {
				what += "; " + n
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", str(r["name"]), cell(what), cell(str(r["source"])))
		}
	case "retry_on":
		b.WriteString("| `retry_on` | retries | like |\n|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", code(str(r["value"])), cell(str(r["means"])), cell(str(r["like"])))
		}
	case "components":
		b.WriteString("| component | keys | what it does | follows |\n|---|---|---|---|\n")
		for _, r := range rows {
			what := str(r["does"])
			if n := str(r["note"]); n != "" {
				what += "; " + n
			}
			var keys []string
			for _, k := range strings.Split(str(r["params"]), ", ") {
				keys = append(keys, "`"+k+"`")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(str(r["name"])), strings.Join(keys, ", "), cell(what), cell(str(r["source"])))
		}
	}
	return b.String()
}
