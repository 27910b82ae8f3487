package parquetio

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// writer buffers rows in Arrow builders and writes them as one Parquet file
// (zstd) on Close.
type writer struct {
	w      io.Writer
	schema *arrow.Schema
	b      *array.RecordBuilder
	rows   int
	extra  [][2]string // key-value metadata known only at Close
	// plain names the columns written without a dictionary: those whose
	// values rarely repeat within a part (keys, seeds, results), where
	// building a dictionary costs time and saves nothing.
	plain []string
	flush func() // appends what the row writer holds back (rowWriter.flush)
	// onRecord, when set, sees the rows before they are encoded.
	onRecord func(arrow.RecordBatch)
	sum      string // the checksum the file was sealed with
}

func newWriter(w io.Writer, fields []arrow.Field, md arrow.Metadata) *writer {
	schema := arrow.NewSchema(fields, &md)
	return &writer{w: w, schema: schema, b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}
}

// Len is the number of rows appended.
func (w *writer) Len() int { return w.rows }

// Close writes the file and releases the builders. The file is complete
// only if Close returns nil.
func (w *writer) Close() error {
	defer w.b.Release()
	if w.flush != nil {
		w.flush()
	}
	rec := w.b.NewRecordBatch()
	defer rec.Release()
	if w.onRecord != nil {
		w.onRecord(rec)
	}
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithCreatedBy(sealedBy), // says the file is sealed (seal.go)
		parquet.WithMaxRowGroupLength(1 << 20),
	}
	for _, c := range w.plain {
		opts = append(opts, parquet.WithDictionaryFor(c, false))
	}
	props := parquet.NewWriterProperties(opts...)
	// The file is built in memory and sealed (seal.go) before it goes to w.
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(w.schema, &buf, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("parquet: %w", err)
	}
	for _, kv := range append(w.extra, [2]string{dataset.KeyPartSHA256, string(unsealed)}) {
		if err := fw.AppendKeyValueMetadata(kv[0], kv[1]); err != nil {
			fw.Close()
			return fmt.Errorf("parquet: %w", err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if w.sum, err = seal(buf.Bytes()); err != nil {
		return err
	}
	_, err = w.w.Write(buf.Bytes())
	return err
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
func (w *RunsWriter) Reserve(rows int) { w.b.Reserve(rows) }

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
	w.onRecord = func(rec arrow.RecordBatch) {
		keys := rec.Column(rec.Schema().FieldIndices(dataset.ColRunKey)[0]).(*array.String)
		for i := range keys.Len() {
			keep(keys.Value(i))
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
