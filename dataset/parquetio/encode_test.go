package parquetio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/gzip"
	pq "github.com/parquet-go/parquet-go"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// The writer encodes its pages itself (encode.go). Two Parquet
// implementations, arrow-go and parquet-go, read every value of every
// column of each table the same, nulls included, in columns written as a
// dictionary (a cell's parameters over its seeds, a run's key over its
// ticks) and PLAIN; and each column chunk's statistics are the least and
// greatest of its values, which the selective reader prunes row groups by.
func TestTwoReadersReadEveryValue(t *testing.T) {
	t.Parallel()
	runs, res, tls := sampleRuns(t)
	var rb, tb, gb bytes.Buffer
	rw, tw, gw := NewRunsWriter(&rb, meta), NewTimelineWriter(&tb, meta), NewGroupsWriter(&gb, meta)
	for i := range 60 { // ten seeds of each cell in a row: dictionary runs
		r := runs[(i/10)%len(runs)]
		rw.Append(grid.Run{Cell: r.Cell, Seed: uint32(i + 1)}, res[(i/10)%len(res)])
		if i%10 == 0 {
			tw.Append(r, tls[(i/10)%len(tls)])
		}
	}
	mixed := grid.Cell{Scenario: runs[0].Scenario, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	mixed.Mix[0] = sim.Group{Share: 0.2, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
	for seed := range uint32(3) {
		var s sim.Sim
		mres, err := mixed.Simulate(&s, sim.NewMulberry32(seed+1), nil)
		if err != nil {
			t.Fatal(err)
		}
		gw.Append(grid.Run{Cell: mixed, Seed: seed + 1}, mres)
	}
	for name, c := range map[string]io.Closer{"runs": rw, "timelines": tw, "groups": gw} {
		if err := c.Close(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	dicts := 0
	for name, b := range map[string][]byte{"runs": rb.Bytes(), "timelines": tb.Bytes(), "groups": gb.Bytes()} {
		dicts += compareReaders(t, name, b)
	}
	if dicts == 0 {
		t.Error("no column was written as a dictionary: the test reads PLAIN pages only")
	}
}

// arrowRead is file b as arrow-go reads it: its reader and its table.
func arrowRead(t *testing.T, name string, b []byte) (*file.Reader, arrow.Table) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: arrow-go: %v", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("%s: arrow-go: %v", name, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: arrow-go: %v", name, err)
	}
	return pf, tbl
}

// compareReaders compares the values arrow-go and parquet-go read from
// file b, and the footer's statistics with the values; it returns how
// many column chunks have a dictionary page.
func compareReaders(t *testing.T, name string, b []byte) (dicts int) {
	t.Helper()
	pf, tbl := arrowRead(t, name, b)
	defer tbl.Release()
	rows := parquetGoRows(t, name, b)
	if int64(len(rows)) != tbl.NumRows() || tbl.NumRows() == 0 {
		t.Fatalf("%s: parquet-go reads %d rows, arrow-go %d", name, len(rows), tbl.NumRows())
	}
	for c := range int(tbl.NumCols()) {
		col, _ := array.Concatenate(tbl.Column(c).Data().Chunks(), memory.DefaultAllocator)
		for i, row := range rows {
			if !sameValue(col, i, row[c]) {
				t.Errorf("%s: column %s row %d: arrow-go %v, parquet-go %v", name, tbl.Schema().Field(c).Name, i, col.ValueStr(i), row[c])
			}
		}
		cc, _ := pf.MetaData().RowGroup(0).ColumnChunk(c)
		if cc.HasDictionaryPage() {
			dicts++
		}
		checkStats(t, name, tbl.Schema().Field(c).Name, cc, col)
		col.Release()
	}
	return dicts
}

func parquetGoRows(t *testing.T, name string, b []byte) []pq.Row {
	t.Helper()
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: parquet-go: %v", name, err)
	}
	var rows []pq.Row
	for _, g := range f.RowGroups() {
		rr := g.Rows()
		buf := make([]pq.Row, 16)
		for {
			n, err := rr.ReadRows(buf)
			for _, r := range buf[:n] {
				rows = append(rows, r.Clone())
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: parquet-go: %v", name, err)
			}
		}
		rr.Close()
	}
	return rows
}

func sameValue(a arrow.Array, i int, v pq.Value) bool {
	if a.IsNull(i) || v.IsNull() {
		return a.IsNull(i) && v.IsNull()
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i) == string(v.ByteArray())
	case *array.Int64:
		return a.Value(i) == v.Int64()
	case *array.Float64:
		return math.Float64bits(a.Value(i)) == math.Float64bits(v.Double())
	case *array.Boolean:
		return a.Value(i) == v.Boolean()
	}
	return false
}

// checkStats checks a numeric column chunk's least and greatest value and
// its nulls against the values read.
func checkStats(t *testing.T, name, col string, cc *metadata.ColumnChunkMetaData, a arrow.Array) {
	t.Helper()
	st, err := cc.Statistics()
	if err != nil || st == nil {
		t.Errorf("%s: column %s: no statistics (%v)", name, col, err)
		return
	}
	if st.NullCount() != int64(a.NullN()) {
		t.Errorf("%s: column %s: %d nulls in the statistics, %d read", name, col, st.NullCount(), a.NullN())
	}
	var lo, hi float64
	switch a.(type) {
	case *array.Int64:
		s := st.(*metadata.Int64Statistics)
		if !s.HasMinMax() {
			return
		}
		lo, hi = float64(s.Min()), float64(s.Max())
	case *array.Float64:
		s := st.(*metadata.Float64Statistics)
		if !s.HasMinMax() {
			return
		}
		lo, hi = s.Min(), s.Max()
	default:
		return
	}
	wlo, whi := math.Inf(1), math.Inf(-1)
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		var x float64
		switch a := a.(type) {
		case *array.Int64:
			x = float64(a.Value(i))
		case *array.Float64:
			x = a.Value(i)
		}
		if !math.IsNaN(x) { // Parquet leaves NaN out
			wlo, whi = min(wlo, x), max(whi, x)
		}
	}
	if lo != wlo || hi != whi {
		t.Errorf("%s: column %s: statistics [%v, %v], values [%v, %v]", name, col, lo, hi, wlo, whi)
	}
}

// The RLE runs the writer emits decode as the runs it meant: a run's
// header is its length shifted left by one (an RLE run, not bit-packed),
// then its value in as many bytes as its bit width needs.
func TestRLERun(t *testing.T) {
	for _, tt := range []struct {
		n    int
		v    uint64
		w    int
		want []byte
	}{
		{3, 1, 1, []byte{6, 1}},
		{300, 5, 3, []byte{0xd8, 0x04, 5}},     // 600 as a ULEB128 varint
		{1, 0x1234, 13, []byte{2, 0x34, 0x12}}, // two bytes of value
	} {
		got := rleRun(nil, tt.n, tt.v, tt.w)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("rleRun(%d, %d, %d) = % x, want % x", tt.n, tt.v, tt.w, got, tt.want)
		}
	}
	// A page header a reader can decode: arrow-go's own reader reads the
	// files (TestTwoReadersReadEveryValue); here its fields in order.
	h := pageHeader(nil, pageData, 7, 100, 60, encPlain)
	want := []byte{0x15, 0x00, 0x15, 0xc8, 0x01, 0x15, 0x78, 0x2c, 0x15, 0x0e, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00, 0x00}
	if !bytes.Equal(h, want) {
		t.Errorf("pageHeader = % x, want % x", h, want)
	}
}

// Every kind of column the writer knows, with the values that encodings
// get wrong: booleans not a multiple of eight (bit order), NaN, ±0 and
// ±Inf, the extremes of int64, empty and null strings, runs long enough to
// be a dictionary and values that never repeat. Both readers read back
// what was written.
func TestWriterEncodesEveryKind(t *testing.T) {
	t.Parallel()
	fields := []arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "fd", Type: arrow.PrimitiveTypes.Float64},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "sd", Type: arrow.BinaryTypes.String},
	}
	odd := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), 1.5, -2.25}
	ints := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
	strs := []string{"", "a", "é", "a longer value"}
	const rows = 77
	want := make([][]dataset.Value, rows)
	var buf bytes.Buffer
	w := newWriter(&buf, fields, fileMetadata(meta, dataset.RunsSchema))
	for r := range rows {
		v := []dataset.Value{
			{Bool: r%3 == 0, Null: r%5 == 4},
			{Float: odd[r%len(odd)], Null: r%11 == 10},
			{Float: float64(r / 20)}, // runs of 20: a dictionary
			{Int: ints[r%len(ints)]},
			{Str: strs[r%len(strs)], Null: r%6 == 5},
			{Str: strs[1+r/40]}, // runs of 40: a dictionary
		}
		for c := range v {
			w.cols[c].append(&v[c])
			if c == 4 && v[c].Str == "" { // a nullable string column writes "" as null
				v[c].Null = true
			}
		}
		want[r] = v
		w.rows++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if dicts := compareReaders(t, "every kind", buf.Bytes()); dicts < 2 {
		t.Errorf("%d columns written as a dictionary, want fd and sd", dicts)
	}
	got := parquetGoRows(t, "every kind", buf.Bytes())
	for r := range rows {
		for c, v := range want[r] {
			g := got[r][c]
			if !readAsWritten(g, v, fields[c].Type.ID()) {
				t.Errorf("row %d column %s: read %v, wrote %+v", r, fields[c].Name, g, v)
			}
		}
	}
}

// readAsWritten reports whether parquet-go read v (null when v.Null) in a
// column of type id.
func readAsWritten(g pq.Value, v dataset.Value, id arrow.Type) bool {
	if v.Null || g.IsNull() {
		return v.Null == g.IsNull()
	}
	switch id {
	case arrow.BOOL:
		return g.Boolean() == v.Bool
	case arrow.FLOAT64:
		return math.Float64bits(g.Double()) == math.Float64bits(v.Float)
	case arrow.INT64:
		return g.Int64() == v.Int
	}
	return string(g.ByteArray()) == v.Str
}

// A runs part's run keys are compressed with gzip's Huffman coding alone
// (writer.hashed), its columns of a few bytes not at all (smallChunk),
// the others with zstd, DELTA_BINARY_PACKED ones among them; every chunk
// of a column with its first's codec (TestByRunEncodesAsRows reads many row
// groups with parquet-go). Both readers read it
// (TestTwoReadersReadEveryValue).
func TestRunsPartCodecs(t *testing.T) {
	t.Parallel()
	runs, res, _ := sampleRuns(t)
	var b bytes.Buffer
	w := NewRunsWriter(&b, meta)
	for i := range 500 {
		r := runs[(i/50)%len(runs)]
		x := res[i%len(res)]
		x.PeakRPS += float64(i) / 7 // a value a row: PLAIN
		w.Append(grid.Run{Cell: r.Cell, Seed: uint32(i + 1)}, x)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[compress.Compression]int{}
	for c := range pf.MetaData().NumColumns() {
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		name, codec := pf.MetaData().Schema.Column(c).Name(), cc.Compression()
		seen[codec]++
		delta := slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked)
		if delta {
			seen[-1]++
		}
		switch {
		case name == dataset.ColRunKey && codec != compress.Codecs.Gzip:
			t.Errorf("%s: %v, want gzip (its Huffman coding alone)", name, codec)
		case name != dataset.ColRunKey && codec == compress.Codecs.Gzip:
			t.Errorf("%s: gzip, want zstd or none", name)
		case codec == compress.Codecs.Uncompressed && cc.TotalUncompressedSize() > smallChunk+64:
			t.Errorf("%s: %d bytes uncompressed", name, cc.TotalUncompressedSize())
		}
	}
	if seen[compress.Codecs.Zstd] == 0 || seen[compress.Codecs.Uncompressed] == 0 || seen[-1] == 0 {
		t.Errorf("codecs %v (-1: DELTA_BINARY_PACKED): want some columns with zstd, some uncompressed, some delta", seen)
	}
	compareReaders(t, "codecs", b.Bytes())
}

// The writer's own zstd and gzip encoders (pageCodecs), page after page
// with the same encoders: arrow-go's zstd codec reads back every page, a
// page with repeats is compressed as small as arrow-go's level 1 makes it
// (within 2 %), one of noise is left as it is (within its frame), and
// gzip gives arrow-go's bytes at Huffman coding alone: random pages of
// random sizes, of few values, of repeats and of noise.
func TestPageCodecs(t *testing.T) {
	t.Parallel()
	zc, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := compress.GetCodec(compress.Codecs.Gzip)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 1))
	var c pageCodecs
	var out []byte
	for i := range 200 {
		page := make([]byte, rng.IntN(1<<(1+rng.IntN(18))))
		kind := i % 3
		for j := range page {
			switch kind {
			case 0: // few values
				page[j] = byte(rng.IntN(1 + i%40))
			case 1: // repeats: a short random pattern
				page[j] = byte(j % (3 + i%50) * 7)
			default: // noise
				page[j] = byte(rng.Uint32())
			}
		}
		out = c.zstdPage(out, page)
		if back := zc.Decode(nil, out); !bytes.Equal(back, page) {
			t.Fatalf("page %d of %d bytes: arrow-go reads back %d bytes", i, len(page), len(back))
		}
		arrow := zc.EncodeLevel(nil, page, 1)
		if kind == 1 && len(page) > 1000 && float64(len(out)) > 1.02*float64(len(arrow)) {
			t.Errorf("page %d of %d bytes of repeats: zstd %d bytes, arrow-go's %d", i, len(page), len(out), len(arrow))
		}
		if kind == 2 && len(out) > len(page)+len(page)/100+32 {
			t.Errorf("page %d of %d bytes of noise: zstd %d bytes", i, len(page), len(out))
		}
		out = c.huffmanPage(out, page)
		if want := gc.EncodeLevel(nil, page, gzip.HuffmanOnly); !bytes.Equal(out, want) {
			t.Fatalf("page %d of %d bytes: gzip %d bytes, arrow-go's %d", i, len(page), len(out), len(want))
		}
	}
}

// The spare column buffers hold at most spareBytes whatever is given
// back, hand out buffers of the room asked, zeroed, and keep no string.
func TestSpareIsBounded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	s := spare[string]{elem: 16}
	for range 800 {
		if rng.IntN(2) == 0 {
			x := make([]string, rng.IntN(1<<16))
			for i := range x {
				x[i] = "kept?"
			}
			s.put(x[:rng.IntN(len(x)+1)])
		} else {
			n := rng.IntN(1 << 15)
			c := n + rng.IntN(1<<15)
			x := s.make(n, c)
			if len(x) != n || cap(x) < c || slices.ContainsFunc(x[:cap(x)], func(v string) bool { return v != "" }) {
				t.Fatalf("make(%d, %d): len %d, cap %d, a value left", n, c, len(x), cap(x))
			}
		}
		held := 0
		for _, x := range s.free {
			held += cap(x) * s.elem
		}
		if held != s.bytes || held > spareBytes {
			t.Fatalf("the spare holds %d bytes, counts %d, bound %d", held, s.bytes, spareBytes)
		}
	}
}
