package dataset

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// parquetStack are the modules that only the Parquet IO (dataset/parquetio)
// pulls in: Arrow, Parquet, their codecs and what they depend on. Measured
// with `go list -deps -f '{{.Module.Path}}'` of parquetio against the
// packages below when they were split.
var parquetStack = []string{
	"github.com/andybalholm/brotli", "github.com/apache/arrow-go/v18", "github.com/apache/thrift",
	"github.com/cespare/xxhash/v2", "github.com/goccy/go-json", "github.com/google/flatbuffers",
	"github.com/google/uuid", "github.com/klauspost/compress", "github.com/klauspost/cpuid/v2",
	"github.com/pierrec/lz4/v4", "github.com/zeebo/xxh3", "golang.org/x/exp", "golang.org/x/net",
	"golang.org/x/sync", "golang.org/x/sys", "google.golang.org/genproto/googleapis/rpc",
	"google.golang.org/grpc", "google.golang.org/protobuf",
}

// The analysis and what stands on it read datasets through Format alone:
// none of them may import a package of the Parquet stack.
func TestAnalysisFreeOfParquetStack(t *testing.T) {
	const mod = "github.com/herdsweep/herdsweep/"
	// modules maps each dependency of pkgs to its module ("" for the
	// standard library).
	modules := func(pkgs ...string) map[string]string {
		out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}"}, pkgs...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", strings.Join(pkgs, " "), err)
		}
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			p, m1, _ := strings.Cut(l, " ")
			m[p] = m1
		}
		return m
	}
	stack := map[string]bool{}
	for _, m := range parquetStack {
		stack[m] = true
	}
	io := map[string]bool{}
	for _, m := range modules(mod + "dataset/parquetio") {
		io[m] = true
	}
	for _, m := range parquetStack {
		if !io[m] {
			t.Errorf("parquetio no longer pulls in %s: take it off parquetStack", m)
		}
	}
	for _, pkg := range []string{"analysis", "plots", "reports", "experiments", "sim", "dataset"} {
		var bad []string
		for p, m := range modules(mod + pkg) {
			if stack[m] {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			t.Errorf("%s imports %d packages of the Parquet stack (%s): read datasets through dataset.Format", pkg, len(bad), strings.Join(bad, ", "))
		}
	}
}

// Only the command imports the config loader: reading a dataset, the
// analysis, the plots and the reports stand on grid's vocabulary, never on
// sweeps.toml's loader. Every package of the module but cmd/sweep (and the
// loader itself) is checked; a failure names the package and what brings
// the loader in.
func TestOnlyTheCommandImportsTheConfigLoader(t *testing.T) {
	const mod = "github.com/herdsweep/herdsweep/"
	const loader = mod + "experiments"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Deps \" \"}}|{{join .Imports \" \"}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list %s...: %v", mod, err)
	}
	imports := map[string][]string{}
	deps := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(l, "|", 3)
		deps[parts[0]] = strings.Fields(parts[1])
		imports[parts[0]] = strings.Fields(parts[2])
	}
	for _, must := range []string{"dataset", "dataset/parquetio", "analysis", "plots", "reports", "grid", "article", "runner"} {
		if _, ok := deps[mod+must]; !ok {
			t.Errorf("go list did not list %s%s", mod, must)
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(deps)) {
		ds := deps[pkg]
		if pkg == loader || pkg == mod+"cmd/sweep" || !slices.Contains(ds, loader) {
			continue
		}
		var via []string // the packages pkg depends on that import the loader themselves
		for _, d := range append([]string{pkg}, ds...) {
			if slices.Contains(imports[d], loader) {
				via = append(via, d)
			}
		}
		slices.Sort(via)
		t.Errorf("%s depends on the config loader %s (imported by %s): take Cell, Run and Params from grid, the article's tables from article, the worker pool from runner", pkg, loader, strings.Join(via, ", "))
	}
}
