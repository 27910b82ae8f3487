package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
)

// issueConfig is the config of the issue that found `check` passing a
// part `report` refuses.
const issueConfig = `[defaults]
clients = 200
capacity_rps = 300
recover_s = 30
seeds = [1, 2]
[sweep.c]
candidates = true
capacity_rps = 300
`

// issueDataset runs issueConfig as the issue did (SOURCE_DATE_EPOCH=
// 1700000000, one part) and returns the dataset and its runs part.
func issueDataset(t *testing.T) (dir, part string) {
	t.Helper()
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	cfg := filepath.Join(t.TempDir(), "m.toml")
	os.WriteFile(cfg, []byte(issueConfig), 0o644)
	dir = filepath.Join(t.TempDir(), "base")
	mustRun(t, "run", "--config", cfg, "--out", dir, "--no-report", "--quiet")
	return dir, firstPart(t, dir, dataset.RunsDir)
}

// unsealPart makes a part look written before sealing: its checksum's
// digits zeros, as the writer has them before it seals.
func unsealPart(b []byte) []byte {
	b = bytes.Clone(b)
	key := append([]byte(dataset.KeyPartSHA256), 0x18, 0x40)
	if i := bytes.Index(b, key); i >= 0 {
		copy(b[i+len(key):], bytes.Repeat([]byte{'0'}, 64))
	}
	return b
}

// copyDataset copies the files of dataset src into a new folder.
func copyDataset(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The issue's one byte: check passed a part report refuses ("eof exception
// decode plain INT64").
func TestCheckRefusesTheIssuesByte(t *testing.T) {
	base, part := issueDataset(t)
	b, _ := os.ReadFile(part)
	for _, sealed := range []bool{true, false} {
		dir := copyDataset(t, base)
		p := filepath.Join(dir, "runs", "sweep=c", filepath.Base(part))
		m := bytes.Clone(b)
		if !sealed {
			m = unsealPart(m)
		}
		m[5301] = 82
		os.WriteFile(p, m, 0o644)
		if _, stderr, code := sweep(t, "report", "--results", dir, "--out", t.TempDir()); code != 2 {
			t.Errorf("sealed %v: report: exit %d, want 2 (the issue's)\n%s", sealed, code, stderr)
		}
		if stdout, _, code := sweep(t, "check", dir); code != 1 || !strings.Contains(stdout, "corrupt: "+p+": corrupt Parquet file: ") {
			t.Errorf("sealed %v: check: exit %d, want 1 naming the part\n%s", sealed, code, stdout)
		}
	}
}

// check && report is a gate that holds: over random 1–4-byte changes of a
// runs part (half within its last 3 KB), whenever a reader (report,
// cells, compare, assert, recommend, diff) refuses the part, check fails;
// and a sealed part that changed fails check whatever changed. 14 of 3,993
// such parts passed check while report, cells and compare refused them.
func TestCheckFailsWheneverAReaderRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs seven commands on each of 60 datasets")
	}
	base, part := issueDataset(t)
	good, _ := os.ReadFile(part)
	dir := copyDataset(t, base)
	p := filepath.Join(dir, "runs", "sweep=c", filepath.Base(part))
	assertFile := filepath.Join(t.TempDir(), "a.assert")
	os.WriteFile(assertFile, []byte("gave_up max <= 1000000\n"), 0o644)
	readers := [][]string{
		{"report", "--results", dir, "--out", t.TempDir()},
		{"cells", "--results", dir, "--out", filepath.Join(t.TempDir(), "cells.parquet")},
		{"compare", base, dir},
		{"assert", "--results", dir, assertFile},
		{"recommend", "--server", "free", "--results", dir, "--capacity", "300", "--clients", "200", "--seeds", "2", "--max-seeds", "2"},
		{"diff", base, dir},
	}
	if _, stderr, code := sweep(t, readers[4]...); code != 0 {
		t.Fatalf("recommend of the good dataset: exit %d\n%s", code, stderr)
	}
	rng := rand.New(rand.NewPCG(23, 4))
	refused, passed := 0, 0
	for trial := range 60 {
		sealed := trial%4 == 0 // most trials unsealed: there only reading strictly finds them
		src := good
		if !sealed {
			src = unsealPart(good)
		}
		m := bytes.Clone(src)
		tail := rng.IntN(2) == 0
		for range 1 + rng.IntN(4) {
			at := rng.IntN(len(m))
			if tail {
				at = len(m) - 1 - rng.IntN(3072)
			}
			m[at] = byte(rng.IntN(256))
		}
		if bytes.Equal(m, src) {
			continue
		}
		os.WriteFile(p, m, 0o644)
		var refusers []string
		for _, args := range readers {
			_, stderr, code := sweep(t, args...)
			if code == 2 {
				refusers = append(refusers, args[0])
			} else if code != 0 && code != 1 {
				t.Errorf("trial %d: %s: exit %d\n%s", trial, args[0], code, stderr)
			}
		}
		stdout, _, code := sweep(t, "check", dir)
		if len(refusers) > 0 {
			refused++
		}
		if code == 0 {
			passed++
		}
		if code == 0 && (len(refusers) > 0 || sealed) {
			t.Errorf("trial %d (sealed %v): check passes a part %s refuse:\n%s", trial, sealed, strings.Join(refusers, ", "), stdout)
		}
	}
	t.Logf("%d of 60 changed parts refused by a reader; check passed %d (unsealed, every reader accepting them)", refused, passed)
}

// forge rewrites a runs part with capacity_rps raised by 1 in every row,
// every other column (run_key included) and the file's metadata as they
// were, the seal too unless dropSeal: a part edited by another tool.
func forge(t *testing.T, path string, dropSeal bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	sc := tbl.Schema()
	kv := pf.MetaData().KeyValueMetadata()
	var keys, values []string
	for i, k := range kv.Keys() {
		if k == "ARROW:schema" || dropSeal && k == dataset.KeyPartSHA256 {
			continue
		}
		keys, values = append(keys, k), append(values, kv.Values()[i])
	}
	md := arrow.NewMetadata(keys, values)
	sc = arrow.NewSchema(sc.Fields(), &md)
	cols := make([]arrow.Array, sc.NumFields())
	for i := range cols {
		ch := tbl.Column(i).Data().Chunks()
		if len(ch) != 1 {
			t.Fatalf("%d chunks", len(ch))
		}
		cols[i] = ch[0]
		if sc.Field(i).Name == "capacity_rps" {
			fb := array.NewFloat64Builder(memory.DefaultAllocator)
			for _, v := range ch[0].(*array.Float64).Float64Values() {
				fb.Append(v + 1)
			}
			cols[i] = fb.NewArray()
		}
	}
	rec := array.NewRecordBatch(sc, cols, tbl.NumRows())
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.NewArrowWriterProperties())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A resumed run validates the parts it finds as check does: a part whose
// capacity_rps was changed with its run_key kept (by another tool, with
// the seal copied or dropped), or whose bytes changed, is refused naming
// it, not taken for the runs it claims (run read run_key alone, took them
// as done, and report read the edited capacity).
func TestResumeRefusesEditedParts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spoil func(t *testing.T, path string)
		want  string
	}{
		{"capacity edited, seal copied", func(t *testing.T, p string) { forge(t, p, false) }, "its bytes changed since it was written"},
		{"capacity edited, seal dropped", func(t *testing.T, p string) { forge(t, p, true) }, "is not the hash of its parameters and seed"},
		{"one byte of a page", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			b[len(b)/3] ^= 0x10
			os.WriteFile(p, b, 0o644)
		}, "its bytes changed since it was written"},
	} {
		dir := smallDataset(t)
		part := firstPart(t, dir, dataset.RunsDir)
		tt.spoil(t, part)
		_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", dir, "--no-report", "--quiet")
		if code != 1 || !strings.Contains(stderr, part+": ") || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "move it away to run without it") {
			t.Errorf("%s: resume: exit %d, want 1 naming the part and %q\n%s", tt.name, code, tt.want, stderr)
		}
		if stdout, _, code := sweep(t, "check", dir); code != 1 || !strings.Contains(stdout, part) {
			t.Errorf("%s: check: exit %d\n%s", tt.name, code, stdout)
		}
	}
}
