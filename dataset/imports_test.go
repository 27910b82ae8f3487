package dataset

import (
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
