package parquetio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// sampleParts returns a real part of each table, as `sweep run` writes them.
func sampleParts(t testing.TB) (runs, timelines, groups []byte) {
	runList, res, tls := sampleRuns(t)
	var rb, tb, gb bytes.Buffer
	rw, tw, gw := NewRunsWriter(&rb, meta), NewTimelineWriter(&tb, meta), NewGroupsWriter(&gb, meta)
	for i := range runList {
		rw.Append(runList[i], res[i])
		if i%2 == 0 {
			tw.Append(runList[i], tls[i])
		}
	}
	sc := sim.Article()
	sc.Clients = 200
	c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	c.Mix[0] = sim.Group{Share: 0.3, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
	var s sim.Sim
	r, err := c.Simulate(&s, sim.NewMulberry32(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw.Append(grid.Run{Cell: c, Seed: 3}, r)
	rw.Manifest(tw.Len(), gw.Len())
	for _, w := range []interface{ Close() error }{rw, tw, gw} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return rb.Bytes(), tb.Bytes(), gb.Bytes()
}

// readAny reads b as the given table.
func readAny(table string, b []byte) (int, error) {
	r := bytes.NewReader(b)
	switch table {
	case "runs":
		recs, _, err := ReadRuns(r)
		return len(recs), err
	case "timelines":
		rows, _, err := ReadTimelines(r)
		return len(rows), err
	default:
		rows, _, err := ReadGroups(r)
		return len(rows), err
	}
}

// rawFile writes one row whose columns are fields, every value its type's
// zero unless null, with the runs schema's metadata.
func rawFile(t *testing.T, fields []arrow.Field, null string) []byte {
	t.Helper()
	md := fileMetadata(meta, dataset.RunsSchema)
	keys, values := append(md.Keys(), dataset.KeyPartSHA256), append(md.Values(), string(unsealed))
	schema := arrow.NewSchema(fields, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for i, f := range fields {
		b := rb.Field(i)
		if f.Name == null {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			b.Append("x")
		case *array.Int64Builder:
			b.Append(0)
		case *array.Int32Builder:
			b.Append(0)
		case *array.Float64Builder:
			b.Append(0)
		case *array.BooleanBuilder:
			b.Append(false)
		default:
			t.Fatalf("rawFile: builder %T", b)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithCreatedBy(sealedBy)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		if err := fw.AppendKeyValueMetadata(keys[i], values[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := seal(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Every column is checked against the schema before it is used: a file
// with the project's metadata but other types is refused, not converted.
func TestReadChecksColumnTypes(t *testing.T) {
	t.Parallel()
	retype := func(name string, typ arrow.DataType) []arrow.Field {
		fs := runsFields()
		for i := range fs {
			if fs[i].Name == name {
				fs[i].Type = typ
			}
		}
		return fs
	}
	nullable := runsFields()
	for i := range nullable {
		nullable[i].Nullable = true
	}
	drop := runsFields()[1:]
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"run_key as BIGINT", rawFile(t, retype(dataset.ColRunKey, arrow.PrimitiveTypes.Int64), ""), `column "run_key" is int64: want utf8`},
		{"seed as string", rawFile(t, retype(dataset.ColSeed, arrow.BinaryTypes.String), ""), `column "seed" is utf8: want int64`},
		{"clients as float", rawFile(t, retype("clients", arrow.PrimitiveTypes.Float64), ""), `column "clients" is float64: want int64`},
		{"t99 as int", rawFile(t, retype(dataset.ColT99, arrow.PrimitiveTypes.Int32), ""), `column "t99_s" is int32: want float64`},
		{"null seed", rawFile(t, nullable, dataset.ColSeed), `column "seed" row 0: null in a column that has none`},
		{"no run_key", rawFile(t, drop, ""), `no column "run_key"`},
	}
	for _, tt := range tests {
		if _, _, err := ReadRuns(bytes.NewReader(tt.file)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ReadRuns = %v, want %q", tt.name, err, tt.want)
		}
		// A scan checks every column's type, not only those it reads.
		want := strings.Replace(tt.want, " row 0:", ":", 1)
		if _, err := ScanRuns(bytes.NewReader(tt.file), []string{dataset.ColSeed}, func(dataset.Batch) error { return nil }); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: ScanRuns = %v, want %q", tt.name, err, want)
		}
		if tt.name == "run_key as BIGINT" {
			if _, _, err := ReadRunKeys(bytes.NewReader(tt.file)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: ReadRunKeys = %v, want %q", tt.name, err, tt.want)
			}
		}
	}
}

// A seed outside Mulberry32's range is an error, not a wrapped number.
func TestReadChecksSeedRange(t *testing.T) {
	t.Parallel()
	for _, v := range []int64{-1, 1 << 32} {
		var buf bytes.Buffer
		w := newWriter(&buf, runsFields(), fileMetadata(meta, dataset.RunsSchema))
		for i := range w.cols {
			w.cols[i].append(&dataset.Value{Str: "x", Int: v})
		}
		w.rows++
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadRuns(bytes.NewReader(buf.Bytes())); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("seed %d: want", v)) {
			t.Errorf("seed %d: ReadRuns = %v", v, err)
		}
	}
}

// mutations is how many random changes of a part a test tries: n, or
// short under -short (.ci/run's race step, where the detector slows the
// readers several times over; the full counts run in its plain go test
// step). The changes are drawn from the same seeds either way: a
// shortened test starts as the full one does.
func mutations(n, short int) int {
	if testing.Short() {
		return short
	}
	return n
}

// Random corruptions of real parts never panic: every one reads whole or
// is an error; a panic inside the Parquet library comes back as "corrupt
// Parquet file". 400 of each table, 100 under -short.
func TestReadNeverPanicsOnCorruptParts(t *testing.T) {
	t.Parallel()
	runs, timelines, groups := sampleParts(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		table string
		file  []byte
	}{{"runs", runs}, {"timelines", timelines}, {"groups", groups}} {
		n := mutations(400, 100)
		errs, corrupt, panics := 0, 0, 0
		for range n {
			b := bytes.Clone(tc.file)
			for range 1 + rng.IntN(3) {
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
			_, err := readAny(tc.table, b)
			if err != nil {
				errs++
				if strings.Contains(err.Error(), "corrupt Parquet file") {
					corrupt++
				}
				if strings.Contains(err.Error(), "runtime error") {
					panics++ // recovered inside the Parquet library
				}
			}
		}
		t.Logf("%s: %d of %d mutations refused, %d of them as corrupt Parquet files (%d panics recovered)", tc.table, errs, n, corrupt, panics)
		if errs == 0 {
			t.Errorf("%s: no mutation was refused: the test does not corrupt", tc.table)
		}
	}
}

// FuzzReadParts feeds mutated parts of every table to the readers: none
// may panic, and a file that reads must read the same twice and agree with
// ReadRunKeys. The seeds are real parts; `go test` runs them.
func FuzzReadParts(f *testing.F) {
	runs, timelines, groups := sampleParts(f)
	f.Add(uint8(0), runs)
	f.Add(uint8(1), timelines)
	f.Add(uint8(2), groups)
	f.Add(uint8(0), timelines) // a part of another table
	f.Add(uint8(1), []byte("PAR1"))
	f.Fuzz(func(t *testing.T, table uint8, b []byte) {
		name := []string{"runs", "timelines", "groups"}[table%3]
		n, err := readAny(name, b)
		if err != nil {
			return
		}
		n2, err := readAny(name, b)
		if err != nil || n2 != n {
			t.Fatalf("read %d rows, then %d, %v", n, n2, err)
		}
		if name == "runs" {
			keys, _, err := ReadRunKeys(bytes.NewReader(b))
			if err != nil || len(keys) != n {
				t.Fatalf("ReadRuns read %d rows, ReadRunKeys %d: %v", n, len(keys), err)
			}
		}
	})
}

// testdata/corrupt-runs.parquet is a real runs part with two bytes of its
// footer changed, which makes the Parquet library panic (makeslice: len
// out of range, in arrow-go v18.8.0): the panic comes back as an error.
func TestReadRecoversLibraryPanic(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/corrupt-runs.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadRuns(bytes.NewReader(b)); err == nil || !strings.HasPrefix(err.Error(), "corrupt Parquet file: ") {
		t.Errorf("ReadRuns: %v, want a corrupt Parquet file", err)
	}
}

// A scan that reads only some columns still refuses a file whose other
// columns are corrupt (here t90_s's dictionary page lies after its data).
func TestScanRefusesCorruptColumnsItDoesNotRead(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/corrupt-runs.parquet")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ScanRuns(bytes.NewReader(b), []string{dataset.ColSeed}, func(dataset.Batch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `corrupt Parquet file: column "t90_s"`) {
		t.Errorf("ScanRuns of a corrupt part = %v", err)
	}
	runs, _, _ := sampleParts(t)
	n := 0
	if _, err := ScanRuns(bytes.NewReader(runs), []string{dataset.ColSeed, dataset.ColT99After}, func(b dataset.Batch) error { n += b.Len(); return nil }); err != nil || n == 0 {
		t.Errorf("ScanRuns of a good part: %d rows, %v", n, err)
	}
}
