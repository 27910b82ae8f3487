package parquetio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

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
	// plain names the columns written without a dictionary: those whose
	// values rarely repeat within a part (keys, seeds, results), where
	// looking for runs costs time and saves nothing.
	plain []string
	flush func() // appends what the row writer holds back (rowWriter.flush)
	// onClose, when set, sees the columns before they are encoded.
	onClose func()
	sum     string // the checksum the file was sealed with
}

// maxRowGroup is the most rows a row group holds.
const maxRowGroup = 1 << 20

func newWriter(w io.Writer, fields []arrow.Field, md arrow.Metadata) *writer {
	wr := &writer{w: w, fields: fields, md: md, cols: make([]colBuf, len(fields))}
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
	if w.onClose != nil {
		w.onClose()
	}
	for _, name := range w.plain {
		for i, f := range w.fields {
			if f.Name == name {
				w.cols[i].plain = true
			}
		}
	}
	// The file is built in memory and sealed (seal.go) before it goes to w.
	b, err := w.encode()
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

// encode returns the file: "PAR1", the column chunks of each row group,
// the footer, its length and "PAR1".
func (w *writer) encode() ([]byte, error) {
	sc, err := pqarrow.ToParquet(arrow.NewSchema(w.fields, nil), props, pqarrow.DefaultWriterProps())
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
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return nil, err
	}
	fb := metadata.NewFileMetadataBuilder(sc, props, kv)
	e := encoder{codec: codec, b: append(make([]byte, 0, 64<<10), "PAR1"...)}
	vlo := make([]int, len(w.cols))
	for lo, rg := 0, 0; lo < w.rows || rg == 0; lo, rg = lo+maxRowGroup, rg+1 {
		hi := min(w.rows, lo+maxRowGroup)
		g := fb.AppendRowGroup()
		g.SetNumRows(hi - lo)
		for i := range w.cols {
			c := &w.cols[i]
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
	codec   compress.Codec
	b       []byte // the file so far
	body    []byte // a page before compression
	packed  []byte // a page compressed
	dict    colBuf
	entries []byte // the dictionary page before compression
	indices []byte
}

var (
	plainStats = metadata.EncodingStats{DataEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.Plain: 1}}
	dictStats  = metadata.EncodingStats{
		DictEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.Plain: 1},
		DataEncodingStats: map[parquet.Encoding]int32{parquet.Encodings.RLEDict: 1},
	}
)

// chunk writes the span of column c as a column chunk: a dictionary page
// if it has one, then one data page; cc learns where they are.
func (e *encoder) chunk(c *colBuf, s span, cc *metadata.ColumnChunkMetaDataBuilder) error {
	start := len(e.b)
	info := metadata.ChunkMetaInfo{NumValues: int64(s.hi - s.lo), IndexPageOffset: -1}
	enc, stats, dict := encPlain, plainStats, c.dictionary(s)
	e.body = e.body[:0]
	if c.optional {
		e.body = c.levels(e.body, s)
	}
	if dict {
		e.indices = c.dict(&e.dict, e.indices[:0], s)
		info.DictPageOffset = int64(start)
		e.entries = e.dict.plainValues(e.entries[:0], 0, e.dict.rows)
		info.UncompressedSize += int64(e.page(pageDictionary, e.dict.rows, e.entries, encPlain))
		e.body = append(e.body, e.indices...)
		enc, stats = encRLEDict, dictStats
	} else {
		e.body = c.plainValues(e.body, s.vlo, s.vhi)
	}
	info.DataPageOffset = int64(len(e.b))
	info.UncompressedSize += int64(e.page(pageData, s.hi-s.lo, e.body, enc))
	info.CompressedSize = int64(len(e.b) - start)
	cc.SetStats(c.stats(s))
	return cc.Finish(info, dict, false, stats)
}

// page compresses body and appends it with its header; it returns the
// page's size uncompressed, header included.
func (e *encoder) page(kind int32, n int, body []byte, enc int32) int {
	e.packed = e.codec.EncodeLevel(e.packed[:0], body, 1)
	at := len(e.b)
	e.b = pageHeader(e.b, kind, n, len(body), len(e.packed), enc)
	head := len(e.b) - at
	e.b = append(e.b, e.packed...)
	return head + len(body)
}

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
	cell grid.Cell // the cell of cc
	have bool
	cc   dataset.CellColumns
	res  sim.Result // the row's, where row points
	row  dataset.RunRow
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
	rw.plain = []string{dataset.ColRunKey, dataset.ColSeed}
	for _, f := range dataset.RunsFields() {
		if dataset.IsMetric(f.Name) {
			rw.plain = append(rw.plain, f.Name)
		}
	}
	rw.rw = newRowWriter(&rw.writer, dataset.RunsTable())
	rw.row = dataset.RunRow{Result: &rw.res, Cell: &rw.cc}
	return rw
}

// Reserve makes room for rows more rows, so that the column builders do
// not grow (and copy) as a part of a known size fills.
func (w *RunsWriter) Reserve(rows int) {
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

// KeepKeys has Close call keep with each row's run key, in row order,
// before it encodes them: for a writer that checks what it wrote against
// what it meant to write without reading the file back. The string is
// valid only during the call.
func (w *RunsWriter) KeepKeys(keep func(key string)) {
	w.onClose = func() {
		for i, f := range w.fields {
			if f.Name == dataset.ColRunKey {
				for _, k := range w.cols[i].str {
					keep(k)
				}
			}
		}
	}
}

// Append adds run r with its result.
func (w *RunsWriter) Append(r grid.Run, res sim.Result) {
	fresh := !w.have || r.Cell != w.cell
	if fresh {
		w.cell, w.have = r.Cell, true
		w.cc.Of(&w.cell)
	}
	w.res, w.row.Seed = res, r.Seed
	w.rw.append(&w.row, fresh)
	w.rows++
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
func (w *TimelineWriter) Append(r grid.Run, tl *sim.Timeline) {
	row := dataset.TimelineRow{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed}
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
func (w *GroupsWriter) Append(r grid.Run, res sim.Result) {
	row := dataset.GroupRow{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed}
	groups := r.Cell.Groups()
	for g := range res.NGroups {
		p := groups[g]
		row.Group, row.Share, row.Result = g, p.Share, res.Groups[g]
		row.Policy, row.Preset, row.Label = string(p.Policy.Kind), p.Policy.Preset, p.Policy.Describe()
		w.rw.append(&row, true)
		w.rows++
	}
}
