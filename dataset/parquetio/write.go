package parquetio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// writer holds rows in its columns and writes them as one Parquet file
// (zstd) on Close (encode.go).
type writer struct {
	w      io.Writer
	fields []arrow.Field
	md     arrow.Metadata
	cols   []colBuf
	rows   int
	extra  [][2]string // key-value metadata known only at Close
	// plain names columns written without a dictionary whatever their
	// values: how a test writes a part as another writer may have.
	plain []string
	// hashed names columns of hashes in hex (a run's key): no match
	// finder shortens them, so gzip's Huffman coding alone compresses
	// them, nearly as well as zstd at a quarter of its CPU (52 against
	// 44 KB for the keys of 5,000 runs, 0.47 against 1.8 ms on a busy
	// machine: BenchmarkHashedColumn).
	hashed []string
	flush  func() // appends what the row writer holds back (rowWriter.flush)
	sum    string // the checksum the file was sealed with
	// groupRows is the most rows a row group holds (maxRowGroup; less in
	// tests).
	groupRows int
}

// maxRowGroup is the most rows a row group holds.
const maxRowGroup = 1 << 20

func newWriter(w io.Writer, fields []arrow.Field, md arrow.Metadata) *writer {
	wr := &writer{w: w, fields: fields, md: md, cols: make([]colBuf, len(fields)), groupRows: maxRowGroup}
	for i, f := range fields {
		wr.cols[i] = colBuf{kind: datasetType(f.Type), optional: f.Nullable, nullEmpty: f.Nullable}
	}
	return wr
}

// Len is the number of rows appended.
func (w *writer) Len() int { return w.rows }

// Close writes the file. The file is complete only if Close returns nil.
func (w *writer) Close() error {
	if w.flush != nil {
		w.flush()
	}
	for i, f := range w.fields {
		w.cols[i].plain = w.cols[i].plain || slices.Contains(w.plain, f.Name)
		w.cols[i].hashed = slices.Contains(w.hashed, f.Name)
	}
	// The file is built in memory and sealed (seal.go) before it goes to w.
	b, err := w.encode()
	for i := range w.cols {
		w.cols[i].release()
	}
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if w.sum, err = seal(b); err != nil {
		return err
	}
	_, err = w.w.Write(b)
	return err
}

// props are the writer properties of every file: the footer's builders
// read the codec and created_by from them.
var props = parquet.NewWriterProperties(
	parquet.WithCompression(compress.Codecs.Zstd),
	parquet.WithCompressionLevel(1),
	parquet.WithCreatedBy(sealedBy), // says the file is sealed (seal.go)
)

// schemas are the Parquet schemas of the writers' fields, by the fields'
// names, types, nullability and metadata: made once, not for each file
// (and only read after).
var schemas sync.Map

func parquetSchema(fields []arrow.Field) (*schema.Schema, error) {
	var key strings.Builder
	for _, f := range fields {
		fmt.Fprintf(&key, "%q %s %t %q %q\n", f.Name, f.Type, f.Nullable, f.Metadata.Keys(), f.Metadata.Values())
	}
	if sc, ok := schemas.Load(key.String()); ok {
		return sc.(*schema.Schema), nil
	}
	sc, err := pqarrow.ToParquet(arrow.NewSchema(fields, nil), props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	schemas.Store(key.String(), sc)
	return sc, nil
}

// encode returns the file: "PAR1", the column chunks of each row group,
// the footer, its length and "PAR1".
func (w *writer) encode() ([]byte, error) {
	sc, err := parquetSchema(w.fields)
	if err != nil {
		return nil, err
	}
	kv := metadata.NewKeyValueMetadata()
	keys, values := w.md.Keys(), w.md.Values()
	for i := range keys {
		kv.Append(keys[i], values[i])
	}
	for _, e := range append(w.extra, [2]string{dataset.KeyPartSHA256, string(unsealed)}) {
		kv.Append(e[0], e[1])
	}
	fb := metadata.NewFileMetadataBuilder(sc, props, kv)
	e := getEncoder()
	defer putEncoder(e)
	e.b, e.codecs = append(make([]byte, 0, 64<<10), "PAR1"...), e.codecs[:0]
	vlo := make([]int, len(w.cols))
	for lo, rg := 0, 0; lo < w.rows || rg == 0; lo, rg = lo+w.groupRows, rg+1 {
		hi := min(w.rows, lo+w.groupRows)
		g := fb.AppendRowGroup()
		g.SetNumRows(hi - lo)
		for i := range w.cols {
			c := &w.cols[i]
			e.col, e.hashed = i, c.hashed
			if c.byRun {
				if err := e.runChunk(c, lo, hi, g.NextColumnChunk()); err != nil {
					return nil, err
				}
				continue
			}
			s := span{lo: lo, hi: hi, vlo: vlo[i], vhi: vlo[i] + (hi - lo)}
			if c.null != nil {
				s.vhi -= countTrue(c.null[lo:hi])
			}
			vlo[i] = s.vhi
			if err := e.chunk(c, s, g.NextColumnChunk()); err != nil {
				return nil, err
			}
		}
		if err := g.Finish(0, int16(rg)); err != nil {
			return nil, err
		}
	}
	fmd, err := fb.Finish()
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(e.b)
	n, err := fmd.WriteTo(buf, nil)
	if err != nil {
		return nil, err
	}
	b := binary.LittleEndian.AppendUint32(buf.Bytes(), uint32(n))
	return append(b, "PAR1"...), nil
}

func countTrue(v []bool) int {
	n := 0
	for _, x := range v {
		if x {
			n++
		}
	}
	return n
}

// encoder writes column chunks after the bytes of the file so far.
type encoder struct {
	b       []byte // the file so far
	body    []byte // a page before compression
	packed  []byte // a page compressed
	dict    colBuf
	entries []byte                 // the dictionary page before compression
	codecs  []compress.Compression // by column: how its chunks are compressed (pages)
	hashed  bool                   // the column being written holds hashes (writer.hashed)
	press   pageCodecs             // compresses pages (codec.go)
	pack    packer                 // bit-packed dictionaries (dictpack.go)
	col     int                    // the column being written
	indices []byte
}

var (
	plainStats = metadata.EncodingStats{DataEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.Plain: 1}}
	deltaStats = metadata.EncodingStats{DataEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.DeltaBinaryPacked: 1}}
	dictStats  = metadata.EncodingStats{
		DictEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.Plain: 1},
		DataEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.RLEDict: 1},
	}
)

// smallChunk is the most bytes a column's first chunk's pages hold for
// the column to be written uncompressed: compressing a page has a fixed
// cost (the codec's state), which a column of a cell's parameters over
// its seeds, a few bytes once a dictionary, would pay for nothing.
// Parquet names the codec of each column chunk, but some readers
// (parquet-go) take the first row group's for every chunk of a column:
// the first decides for all (encoder.plain).
const smallChunk = 512

// chunk writes the span of column c as a column chunk: a dictionary page
// if it has one, then one data page; cc learns where they are.
func (e *encoder) chunk(c *colBuf, s span, cc *metadata.ColumnChunkMetaDataBuilder) error {
	dict := c.dictionary(s)
	e.body, e.entries = e.body[:0], e.entries[:0]
	if c.optional {
		e.body = c.levels(e.body, s)
	}
	enc := encPlain
	switch {
	case dict:
		enc = encRLEDict
		e.indices = c.dict(&e.dict, e.indices[:0], s)
		e.entries = e.dict.plainValues(e.entries, 0, e.dict.rows)
		e.body = append(e.body, e.indices...)
	case e.pack.packed(c, &e.dict, s):
		enc = encPacked
		e.entries = e.dict.plainValues(e.entries, 0, e.dict.rows)
		e.body = bitPacked(e.body, e.pack.idx, e.dict.rows)
	case c.kind == dataset.Int64:
		enc = encDelta
		e.body = deltaBinaryPacked(e.body, c.i64[s.vlo:s.vhi])
	default:
		e.body = c.plainValues(e.body, s.vlo, s.vhi)
	}
	return e.pages(cc, s.hi-s.lo, enc, c.stats(s))
}

// runChunk writes the rows [lo, hi) of a byRun column as chunk would write
// them as rows: as a dictionary from its runs, or else expanded.
func (e *encoder) runChunk(c *colBuf, lo, hi int, cc *metadata.ColumnChunkMetaDataBuilder) error {
	nulls := c.nullsIn(lo, hi)
	values := hi - lo - nulls
	if !c.runDictionary(lo, hi, values) {
		return e.chunk(c.expand(lo, hi), span{lo: 0, hi: hi - lo, vlo: 0, vhi: values}, cc)
	}
	e.body, e.entries = e.body[:0], e.entries[:0]
	if c.optional {
		e.body = c.runLevels(e.body, lo, hi)
	}
	e.indices = c.runDict(&e.dict, e.indices[:0], lo, hi)
	e.entries = e.dict.plainValues(e.entries, 0, e.dict.rows)
	e.body = append(e.body, e.indices...)
	// the values' range is the dictionary's
	return e.pages(cc, hi-lo, encRLEDict, e.dict.stats(span{lo: 0, hi: e.dict.rows + nulls, vlo: 0, vhi: e.dict.rows}))
}

// encPacked is, for pages, a dictionary whose data page is its indices
// bit-packed (dictpack.go): RLE_DICTIONARY in the file.
const encPacked = -1

// pages writes the pages of a column chunk of rows rows from e.entries
// (the dictionary, if enc is one) and e.body (the data page, encoded as
// enc says), with the chunk's statistics st.
func (e *encoder) pages(cc *metadata.ColumnChunkMetaDataBuilder, rows int, enc int32, st metadata.EncodedStatistics) error {
	start := len(e.b)
	info := metadata.ChunkMetaInfo{NumValues: int64(rows), IndexPageOffset: -1}
	dict := enc == encRLEDict || enc == encPacked
	if len(e.codecs) <= e.col { // the first row group's chunk decides (smallChunk)
		switch {
		case len(e.entries)+len(e.body) <= smallChunk:
			e.codecs = append(e.codecs, compress.Codecs.Uncompressed)
		case e.hashed:
			e.codecs = append(e.codecs, compress.Codecs.Gzip)
		default:
			// Bit-packed chunks too: zstd took only a tenth off a tiny
			// run's metrics, but half off larger runs' and 98 % off a
			// timeline's ticks (their indices repeat run after run).
			e.codecs = append(e.codecs, compress.Codecs.Zstd)
		}
	}
	codec := e.codecs[e.col]
	if codec != compress.Codecs.Zstd {
		setCodec(&cc.Contents().MetaData.Codec, codec)
	}
	stats := plainStats
	switch enc {
	case encPacked:
		enc = encRLEDict
		fallthrough
	case encRLEDict:
		stats = dictStats
		info.DictPageOffset = int64(start)
		info.UncompressedSize += int64(e.page(pageDictionary, e.dict.rows, e.entries, encPlain, codec))
	case encDelta:
		stats = deltaStats
	}
	info.DataPageOffset = int64(len(e.b))
	info.UncompressedSize += int64(e.page(pageData, rows, e.body, enc, codec))
	info.CompressedSize = int64(len(e.b) - start)
	cc.SetStats(st)
	if err := cc.Finish(info, dict, false, stats); err != nil {
		return err
	}
	if enc == encDelta { // Finish names the writer properties' encoding
		setEncoding(&cc.Contents().MetaData.Encodings[0], parquet.Encodings.DeltaBinaryPacked)
	}
	return nil
}

// page appends body with its header, compressed by codec; it returns the
// page's size uncompressed, header included.
func (e *encoder) page(kind int32, n int, body []byte, enc int32, codec compress.Compression) int {
	out := body
	switch codec {
	case compress.Codecs.Zstd:
		e.packed = e.press.zstdPage(e.packed, body)
		out = e.packed
	case compress.Codecs.Gzip:
		e.packed = e.press.huffmanPage(e.packed, body)
		out = e.packed
	}
	at := len(e.b)
	e.b = pageHeader(e.b, kind, n, len(body), len(out), enc)
	head := len(e.b) - at
	e.b = append(e.b, out...)
	return head + len(body)
}

// setCodec sets a column chunk's codec in its metadata (whose type
// arrow-go keeps internal) to c: compress's numbers are the format's.
func setCodec[T ~int64](codec *T, c compress.Compression) { *codec = T(c) }

// setEncoding sets an encoding of a column chunk's metadata (whose type
// arrow-go keeps internal) to e: parquet's numbers are the format's.
func setEncoding[T ~int64](enc *T, e parquet.Encoding) { *enc = T(e) }

// Checksum is the checksum the file was sealed with (dataset.KeyPartSHA256,
// 64 hex digits), once Close returned nil: what Seal finds in the file as
// long as it holds the bytes written.
func (w *writer) Checksum() string { return w.sum }

// RunsWriter writes a runs table: one row per run, through the table's
// column list (dataset.RunsTable). What depends on the cell alone (its
// keys, label and parameter values) is worked out once per run of
// consecutive rows of one cell, as a sweep hands them out.
type RunsWriter struct {
	writer
	rw   *rowWriter[dataset.RunRow, dataset.Record]
	last grid.LastCell // the cell of cc
	cc   dataset.CellColumns
	res  []sim.Result // the results of the rows the row writer holds, by slot
	row  dataset.RunRow
	keys []uint64 // Keys
}

// NewRunsWriter returns a writer of the runs table to w, with meta in the
// file's key-value metadata.
func NewRunsWriter(w io.Writer, meta dataset.Meta) *RunsWriter {
	return newRunsWriter(w, meta, runsFields())
}

// newRunsWriter is NewRunsWriter with the given fields (the runs table's,
// or in tests the same columns as a part of an earlier release had them).
func newRunsWriter(w io.Writer, meta dataset.Meta, fields []arrow.Field) *RunsWriter {
	rw := &RunsWriter{writer: *newWriter(w, fields, fileMetadata(meta, dataset.RunsSchema))}
	rw.rw = newRowWriter(&rw.writer, dataset.RunsTable())
	rw.res = make([]sim.Result, rowBatch)
	rw.hashed = []string{dataset.ColRunKey}
	rw.row = dataset.RunRow{Cell: &rw.cc}
	return rw
}

// Reserve makes room for rows more rows, so that the column builders do
// not grow (and copy) as a part of a known size fills.
func (w *RunsWriter) Reserve(rows int) {
	w.keys = slices.Grow(w.keys, rows)
	for i := range w.cols {
		w.cols[i].reserve(rows)
	}
}

// Manifest records in the runs file how many rows the side-table parts
// committed with it hold, for `sweep check`. Call it before Close.
func (w *RunsWriter) Manifest(timelineRows, groupRows int) {
	w.extra = [][2]string{
		{dataset.KeyPartTimelines, strconv.Itoa(timelineRows)},
		{dataset.KeyPartGroups, strconv.Itoa(groupRows)},
	}
}

// Keys are the rows' run keys, in row order, as the numbers their hex
// digits spell (grid.Keyer.Bits): for a writer that checks what it wrote
// against what it meant to write without reading the file back. The
// slice is the writer's: the caller keeps it, the writer only appends.
func (w *RunsWriter) Keys() []uint64 { return w.keys }

// Append adds run r with its result and returns the run's key
// (grid.Run.Key), for its rows in the side tables.
func (w *RunsWriter) Append(r grid.Run, res sim.Result) string { return w.AppendOf(0, r, &res) }

// AppendOf is Append of a run whose cell is numbered cell (grid.LastCell:
// runs of one number > 0 have one cell; 0 = not numbered).
func (w *RunsWriter) AppendOf(cell int, r grid.Run, res *sim.Result) string {
	fresh := w.last.Changed(&r.Cell, cell)
	if fresh {
		w.rw.flush() // the rows held point at cc
		w.cc.Of(w.last.Cell())
	}
	bits := w.cc.Keyer.Bits(r.Seed)
	w.keys = append(w.keys, bits)
	key := grid.KeyOfBits(bits)
	k := w.rw.slot()
	w.res[k] = *res
	w.row.Key, w.row.Result, w.row.Seed = key, &w.res[k], r.Seed
	w.rw.append(&w.row, fresh)
	w.rows++
	return key
}

// TimelineWriter writes a timelines table: one row per tick of each run.
type TimelineWriter struct {
	writer
	rw *rowWriter[dataset.TimelineRow, dataset.TimelineRow]
}

// NewTimelineWriter returns a writer of the timelines table to w.
func NewTimelineWriter(w io.Writer, meta dataset.Meta) *TimelineWriter {
	tw := &TimelineWriter{writer: *newWriter(w, timelineFields(), fileMetadata(meta, dataset.TimelineSchema))}
	tw.rw = newRowWriter(&tw.writer, dataset.TimelineTable())
	return tw
}

// Append adds the timeline of run r: every tick where something happened
// (a request arrived, was answered in time, or a client gave up), so that
// the rows sum to the run's totals (sim.Timeline). Ticks where nothing did
// are left out: a run that waits out a long backoff would otherwise write
// thousands of rows of zeros.
func (w *TimelineWriter) Append(r grid.Run, tl *sim.Timeline) { w.AppendKeyed(r, r.Key(), tl) }

// AppendKeyed is Append of run r, whose key (grid.Run.Key) is key.
func (w *TimelineWriter) AppendKeyed(r grid.Run, key string, tl *sim.Timeline) {
	row := dataset.TimelineRow{RunKey: key, CellKey: r.Cell.Key(), Seed: r.Seed}
	for k := range tl.Arrivals {
		if tl.Arrivals[k] == 0 && tl.Served[k] == 0 && tl.GaveUp[k] == 0 {
			continue
		}
		row.Tick, row.T = k, (tl.Tick * time.Duration(k)).Seconds()
		row.Arrivals, row.Served, row.GaveUp = int(tl.Arrivals[k]), int(tl.Served[k]), int(tl.GaveUp[k])
		w.rw.append(&row, true)
		w.rows++
	}
}

// GroupsWriter writes a groups table: a mixed fleet's metrics per group.
type GroupsWriter struct {
	writer
	rw *rowWriter[dataset.GroupRow, dataset.GroupRow]
}

// NewGroupsWriter returns a writer of the groups table to w.
func NewGroupsWriter(w io.Writer, meta dataset.Meta) *GroupsWriter {
	return newGroupsWriter(w, meta, groupsFields())
}

// newGroupsWriter is NewGroupsWriter with the given fields (the groups
// table's, or in tests the same columns as a part of an earlier release
// had them).
func newGroupsWriter(w io.Writer, meta dataset.Meta, fields []arrow.Field) *GroupsWriter {
	gw := &GroupsWriter{writer: *newWriter(w, fields, fileMetadata(meta, dataset.GroupsSchema))}
	gw.rw = newRowWriter(&gw.writer, dataset.GroupsTable())
	return gw
}

// Append adds run r's groups; a run of one policy adds none.
func (w *GroupsWriter) Append(r grid.Run, res sim.Result) { w.AppendKeyed(r, r.Key(), &res) }

// AppendKeyed is Append of run r, whose key (grid.Run.Key) is key.
func (w *GroupsWriter) AppendKeyed(r grid.Run, key string, res *sim.Result) {
	row := dataset.GroupRow{RunKey: key, CellKey: r.Cell.Key(), Seed: r.Seed}
	groups := r.Cell.Groups()
	for g := range res.NGroups {
		p := groups[g]
		row.Group, row.Share, row.Result = g, p.Share, res.Groups[g]
		row.Policy, row.Preset, row.Label = string(p.Policy.Kind), p.Policy.Preset, p.Policy.Describe()
		w.rw.append(&row, true)
		w.rows++
	}
}
