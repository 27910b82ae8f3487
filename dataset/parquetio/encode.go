package parquetio

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/herdsweep/herdsweep/dataset"
)

// The writer encodes its columns itself, the few ways a dataset's flat
// tables need, and leaves the footer to arrow-go's metadata builders:
// a column whose values come in runs (a cell's parameters over its seeds,
// a run's key over its ticks) is a dictionary of its distinct values with
// the runs as RLE indices, costing a comparison a value; any other is
// PLAIN. Each column chunk is one data page (v1) after its dictionary
// page, compressed with the file's codec. Going through Arrow's builders
// and arrow-go's column writers instead cost five times the CPU on a part
// of tiny runs (BenchmarkRunsWriter), most of a sweep of a million of them.

// column holds one column's values until the file is written: the values
// that are not null, in a slice of their kind, and which rows are null.
type colBuf struct {
	kind      dataset.Type
	optional  bool // the schema's field is nullable
	nullEmpty bool // "" is written as null (grid.Param.NullZero)
	plain     bool // never a dictionary (writer.plain)
	hashed    bool // hashes in hex (writer.hashed)
	// byRun: a value per run of rows (byrun.go), with each run's rows
	// and nullness; the values are those of the runs that are not null.
	byRun   bool
	runLen  []int
	runNull []bool
	// adaptive: a column of rows kept by runs while they are long (a
	// metric the same in every run of a part), else by rows (append);
	// hint is the rows the writer expects (reserve).
	adaptive bool
	hint     int
	rows     int
	null     []bool // one a row, made at the first null
	nulls    int
	f64      []float64
	i64      []int64
	str      []string
	bools    []bool
}

func (c *colBuf) reserve(n int) {
	if c.byRun {
		c.hint = c.rows + n
		return
	}
	switch c.kind {
	case dataset.Float64:
		c.f64 = grow(&spareF64, c.f64, n)
	case dataset.Int64:
		c.i64 = grow(&spareI64, c.i64, n)
	case dataset.Utf8:
		c.str = grow(&spareStr, c.str, n)
	default:
		c.bools = grow(&spareBools, c.bools, n)
	}
}

// grow returns s with room for n more values, from sp's buffers.
func grow[T any](sp *spare[T], s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	out := sp.make(len(s), len(s)+n)
	copy(out, s)
	sp.put(s)
	return out
}

// appendNulls appends n null rows.
func (c *colBuf) appendNulls(n int) {
	if c.null == nil {
		c.null = spareBools.make(c.rows, c.rows+n)
	}
	for range n {
		c.null = append(c.null, true)
	}
	c.rows += n
	c.nulls += n
}

// appendN appends v to n rows.
func (c *colBuf) appendN(v *dataset.Value, n int) {
	if n <= 0 {
		return
	}
	if v.Null || c.kind == dataset.Utf8 && c.nullEmpty && v.Str == "" {
		c.appendNulls(n)
		return
	}
	if c.null != nil {
		for range n {
			c.null = append(c.null, false)
		}
	}
	c.rows += n
	switch c.kind {
	case dataset.Float64:
		for range n {
			c.f64 = append(c.f64, v.Float)
		}
	case dataset.Int64:
		for range n {
			c.i64 = append(c.i64, v.Int)
		}
	case dataset.Utf8:
		for range n {
			c.str = append(c.str, v.Str)
		}
	default:
		for range n {
			c.bools = append(c.bools, v.Bool)
		}
	}
}

// span is the rows [lo, hi) of a column and its values [vlo, vhi): a row
// group's share of it.
type span struct{ lo, hi, vlo, vhi int }

// runs counts the runs of equal values in the span's values, up to
// limit: past it the count stops, at limit+1.
func (c *colBuf) runs(s span, limit int) int {
	if s.vhi == s.vlo {
		return 0
	}
	switch c.kind {
	case dataset.Float64:
		return countRuns(c.f64[s.vlo:s.vhi], limit, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	case dataset.Int64:
		return countRuns(c.i64[s.vlo:s.vhi], limit, func(a, b int64) bool { return a == b })
	case dataset.Utf8:
		return countRuns(c.str[s.vlo:s.vhi], limit, func(a, b string) bool { return a == b })
	}
	return s.vhi - s.vlo // booleans are never a dictionary
}

// countRuns counts the runs of equal values in v, up to limit+1.
func countRuns[T any](v []T, limit int, eq func(a, b T) bool) int {
	n := 1
	for i := 1; i < len(v) && n <= limit; i++ {
		if !eq(v[i], v[i-1]) {
			n++
		}
	}
	return n
}

// dictionary reports whether the span is written as a dictionary: its
// values come in runs eight long on average (a cell's parameters over its
// seeds, a metric that is the same in every run). The count stops as
// soon as the runs are too many, so a column of keys costs an eighth of
// its values' comparisons.
func (c *colBuf) dictionary(s span) bool {
	if c.plain || c.kind == dataset.Bool || s.vhi == s.vlo {
		return false
	}
	limit := (s.vhi - s.vlo) / 8
	return c.runs(s, limit) <= limit
}

// levels appends the span's definition levels (1: a value, 0: null) as a
// v1 data page holds them: their length, then the RLE runs.
func (c *colBuf) levels(b []byte, s span) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	if c.null == nil {
		b = rleRun(b, s.hi-s.lo, 1, 1)
	} else {
		for i := s.lo; i < s.hi; {
			j := i + 1
			for j < s.hi && c.null[j] == c.null[i] {
				j++
			}
			v := uint64(1)
			if c.null[i] {
				v = 0
			}
			b = rleRun(b, j-i, v, 1)
			i = j
		}
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// rleRun appends a run of n copies of v, bit width w, in the RLE/bit-packed
// hybrid encoding.
func rleRun(b []byte, n int, v uint64, w int) []byte {
	b = binary.AppendUvarint(b, uint64(n)<<1)
	for i := range (w + 7) / 8 {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// plainValues appends the values [lo, hi) PLAIN-encoded.
func (c *colBuf) plainValues(b []byte, lo, hi int) []byte {
	switch c.kind {
	case dataset.Float64:
		for _, v := range c.f64[lo:hi] {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	case dataset.Int64:
		for _, v := range c.i64[lo:hi] {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	case dataset.Utf8:
		for _, v := range c.str[lo:hi] {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
			b = append(b, v...)
		}
	default:
		var acc byte
		for i, v := range c.bools[lo:hi] {
			if v {
				acc |= 1 << (i % 8)
			}
			if i%8 == 7 {
				b, acc = append(b, acc), 0
			}
		}
		if (hi-lo)%8 != 0 {
			b = append(b, acc)
		}
	}
	return b
}

// dict builds the span's dictionary: dc holds its distinct values in the
// order they first come, and the result is the data page's values: the
// indices' bit width, then one RLE run of an index for each run of equal
// values (two runs next to each other differ, so their indices do).
func (c *colBuf) dict(dc *colBuf, idx []byte, s span) []byte {
	*dc = colBuf{kind: c.kind}
	var runs []dictRun
	switch c.kind {
	case dataset.Float64:
		runs = dictOf(c.f64[s.vlo:s.vhi], &dc.f64, math.Float64bits)
	case dataset.Int64:
		runs = dictOf(c.i64[s.vlo:s.vhi], &dc.i64, func(v int64) int64 { return v })
	default:
		runs = dictOf(c.str[s.vlo:s.vhi], &dc.str, func(v string) string { return v })
	}
	dc.rows = len(dc.f64) + len(dc.i64) + len(dc.str)
	return dictIndices(idx, runs, dc.rows)
}

// dictIndices appends a dictionary data page's values: the indices' bit
// width for a dictionary of entries, then an RLE run of each run's index.
func dictIndices(idx []byte, runs []dictRun, entries int) []byte {
	w := max(1, bits.Len(uint(entries-1)))
	idx = append(idx, byte(w))
	for _, r := range runs {
		idx = rleRun(idx, r.n, uint64(r.id), w)
	}
	return idx
}

// dictRun is a run of n equal values, entry id of the dictionary.
type dictRun struct {
	id int32
	n  int
}

// dictOf returns the runs of equal values in vals with their entries in
// the dictionary d, which it appends to.
func dictOf[T any, K comparable](vals []T, d *[]T, key func(T) K) []dictRun {
	var runs []dictRun
	seen := map[K]int32{}
	for i := 0; i < len(vals); {
		k := key(vals[i])
		id, ok := seen[k]
		if !ok {
			id = int32(len(*d))
			seen[k] = id
			*d = append(*d, vals[i])
		}
		j := i + 1
		for j < len(vals) && key(vals[j]) == k {
			j++
		}
		runs = append(runs, dictRun{id, j - i})
		i = j
	}
	return runs
}

// stats are the span's statistics: the least and greatest value (NaN left
// out, a zero as -0 for the least and +0 for the greatest, as Parquet
// asks) and the nulls.
func (c *colBuf) stats(s span) metadata.EncodedStatistics {
	st := metadata.EncodedStatistics{HasNullCount: true, NullCount: int64((s.hi - s.lo) - (s.vhi - s.vlo))}
	st.AllNullValue = s.vhi == s.vlo
	var lo, hi []byte
	switch c.kind {
	case dataset.Float64:
		lo, hi = floatRange(c.f64[s.vlo:s.vhi])
		st.Signed = true
	case dataset.Int64:
		lo, hi = intRange(c.i64[s.vlo:s.vhi])
		st.Signed = true
	case dataset.Utf8:
		lo, hi = strRange(c.str[s.vlo:s.vhi])
	default:
		lo, hi = boolRange(c.bools[s.vlo:s.vhi])
		st.Signed = true
	}
	if lo != nil {
		st.SetMin(lo)
		st.SetMax(hi)
	}
	return st
}

func floatRange(v []float64) (lo, hi []byte) {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		// NaN is neither: the comparisons are false
		if x < mn {
			mn = x
		}
		if x > mx {
			mx = x
		}
	}
	if mn > mx { // no value but NaN
		return nil, nil
	}
	if mn == 0 {
		mn = math.Copysign(0, -1)
	}
	if mx == 0 {
		mx = 0
	}
	return floatBytes(mn), floatBytes(mx)
}

func floatBytes(x float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)) }

func intRange(v []int64) (lo, hi []byte) {
	if len(v) == 0 {
		return nil, nil
	}
	mn, mx := v[0], v[0]
	for _, x := range v[1:] {
		mn, mx = min(mn, x), max(mx, x)
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(mn)), binary.LittleEndian.AppendUint64(nil, uint64(mx))
}

func strRange(v []string) (lo, hi []byte) {
	if len(v) == 0 {
		return nil, nil
	}
	mn, mx := v[0], v[0]
	for _, x := range v[1:] {
		mn, mx = min(mn, x), max(mx, x)
	}
	return []byte(mn), []byte(mx)
}

func boolRange(v []bool) (lo, hi []byte) {
	if len(v) == 0 {
		return nil, nil
	}
	var t, f bool
	for _, x := range v {
		t, f = t || x, f || !x
	}
	b := func(x bool) []byte {
		if x {
			return []byte{1}
		}
		return []byte{0}
	}
	return b(!f), b(t)
}

// Page and encoding numbers of the Parquet format (parquet.thrift).
const (
	pageData       = 0
	pageDictionary = 2
)

var (
	encPlain   = int32(parquet.Encodings.Plain)
	encRLE     = int32(parquet.Encodings.RLE)
	encRLEDict = int32(parquet.Encodings.RLEDict)
	encDelta   = int32(parquet.Encodings.DeltaBinaryPacked)
)

// pageHeader appends a page's Thrift header (compact protocol): a data
// page (v1) of n values or a dictionary page of n entries.
func pageHeader(b []byte, kind int32, n, raw, packed int, enc int32) []byte {
	var t compact
	t.b = b
	t.i32(1, kind)
	t.i32(2, int32(raw))
	t.i32(3, int32(packed))
	if kind == pageData {
		t.begin(5)
		t.i32(1, int32(n))
		t.i32(2, enc)
		t.i32(3, encRLE)
		t.i32(4, encRLE)
		t.end()
	} else {
		t.begin(7)
		t.i32(1, int32(n))
		t.i32(2, enc)
		t.end()
	}
	t.b = append(t.b, 0) // the header's stop
	return t.b
}

// compact writes Thrift's compact protocol: just the i32 fields and
// structs a page header has.
type compact struct {
	b     []byte
	last  int16
	stack []int16
}

func (t *compact) field(id int16, typ byte) {
	t.b = append(t.b, byte(id-t.last)<<4|typ) // ids here grow by 1 to 15
	t.last = id
}

func (t *compact) i32(id int16, v int32) {
	t.field(id, 5)
	t.b = binary.AppendUvarint(t.b, uint64(uint32(v<<1)^uint32(v>>31)))
}

func (t *compact) begin(id int16) {
	t.field(id, 12)
	t.stack = append(t.stack, t.last)
	t.last = 0
}

func (t *compact) end() {
	t.b = append(t.b, 0)
	t.last, t.stack = t.stack[len(t.stack)-1], t.stack[:len(t.stack)-1]
}
