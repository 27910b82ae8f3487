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
	rec := w.b.NewRecordBatch()
	defer rec.Release()
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
	if err := seal(buf.Bytes()); err != nil {
		return err
	}
	_, err = w.w.Write(buf.Bytes())
	return err
}

// RunsWriter writes a runs table: one row per run. It appends straight to
// typed column builders, and what depends on the cell alone (its keys,
// label and parameter values) is computed once per run of consecutive rows
// of one cell, as a sweep hands them out.
type RunsWriter struct {
	writer
	str []*array.StringBuilder // by field; nil where the column is not a string
	// nullEmpty: the string column stores "" as null (its field is
	// nullable: grid.Param.NullZero, the preset).
	nullEmpty []bool
	i64       []*array.Int64Builder
	f64       []*array.Float64Builder
	bool      []*array.BooleanBuilder

	cell grid.Cell // the cell of the cached values below
	have bool
	cc   cellColumns
}

// cellColumns are the columns of a row that depend on its cell alone.
type cellColumns struct {
	canonical, key, label, spec string
	params                      []any // by grid.Params, as Get returns them
}

// NewRunsWriter returns a writer of the runs table to w, with meta in the
// file's key-value metadata.
func NewRunsWriter(w io.Writer, meta dataset.Meta) *RunsWriter {
	return newRunsWriter(w, meta, runsFields())
}

// newRunsWriter is NewRunsWriter with the given fields (the runs table's,
// or in tests a part of an earlier release's).
func newRunsWriter(w io.Writer, meta dataset.Meta, fields []arrow.Field) *RunsWriter {
	rw := &RunsWriter{writer: *newWriter(w, fields, fileMetadata(meta, dataset.RunsSchema))}
	rw.plain = []string{dataset.ColRunKey, dataset.ColSeed}
	for _, f := range dataset.RunsFields() {
		if dataset.IsMetric(f.Name) {
			rw.plain = append(rw.plain, f.Name)
		}
	}
	n := len(rw.schema.Fields())
	rw.str, rw.i64, rw.nullEmpty = make([]*array.StringBuilder, n), make([]*array.Int64Builder, n), make([]bool, n)
	rw.f64, rw.bool = make([]*array.Float64Builder, n), make([]*array.BooleanBuilder, n)
	for i := range n {
		switch b := rw.b.Field(i).(type) {
		case *array.StringBuilder:
			rw.str[i], rw.nullEmpty[i] = b, rw.schema.Field(i).Nullable
		case *array.Int64Builder:
			rw.i64[i] = b
		case *array.Float64Builder:
			rw.f64[i] = b
		case *array.BooleanBuilder:
			rw.bool[i] = b
		}
	}
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

// appendString appends v, or a null for "" when the column stores none
// as null (its field is nullable: grid.Param.NullZero, the preset).
func appendString(b *array.StringBuilder, v string, nullEmpty bool) {
	if nullEmpty && v == "" {
		b.AppendNull()
		return
	}
	b.Append(v)
}

func milestone(b *array.Float64Builder, m sim.Milestone) {
	if m.Reached {
		b.Append(m.At.Seconds())
	} else {
		b.AppendNull()
	}
}

// Append adds run r with its result.
func (w *RunsWriter) Append(r grid.Run, res sim.Result) {
	if !w.have || r.Cell != w.cell {
		w.cell, w.have = r.Cell, true
		w.cc.canonical = r.Cell.Canonical()
		w.cc.key, w.cc.label, w.cc.spec = r.Cell.Key(), r.Cell.Label(), r.Cell.PolicySpec()
		w.cc.params = w.cc.params[:0]
		for pi := range grid.Params {
			w.cc.params = append(w.cc.params, grid.Params[pi].Get(r.Cell))
		}
	}
	w.str[0].Append(grid.RunKey(w.cc.canonical, r.Seed))
	w.str[1].Append(w.cc.key)
	w.i64[2].Append(int64(r.Seed))
	w.str[3].Append(w.cc.label)
	w.str[4].Append(w.cc.spec)
	i := 5
	for _, v := range w.cc.params {
		switch v := v.(type) {
		case int64:
			w.i64[i].Append(v)
		case float64:
			w.f64[i].Append(v)
		case string:
			appendString(w.str[i], v, w.nullEmpty[i])
		case bool:
			w.bool[i].Append(v)
		}
		i++
	}
	ints := func(v int64) { w.i64[i].Append(v); i++ }
	floats := func(v float64) { w.f64[i].Append(v); i++ }
	ms := func(m sim.Milestone) { milestone(w.f64[i], m); i++ }
	ints(res.Sent)
	ints(res.SentAfterRecovery)
	ints(int64(res.PeakArrivals))
	floats(res.PeakRPS)
	ms(res.T50)
	ms(res.T90)
	ms(res.T99)
	ms(res.AllDone)
	rec := r.Cell.Scenario.RecoverAt
	ms(sim.Milestone{At: res.T50.At - rec, Reached: res.T50.Reached})
	ms(sim.Milestone{At: res.T90.At - rec, Reached: res.T90.Reached})
	ms(sim.Milestone{At: res.T99.At - rec, Reached: res.T99.Reached})
	ms(sim.Milestone{At: res.AllDone.At - rec, Reached: res.AllDone.Reached})
	ints(int64(res.Succeeded))
	ints(int64(res.GaveUp))
	ints(int64(res.Pending))
	floats(res.End.Seconds())
	ints(res.Goodput)
	ints(res.TimedOut)
	ints(res.Rejected)
	ints(res.Offered)
	ints(res.OfferedGaveUp)
	floats(res.BusyMS)
	floats(res.WastedMS)
	floats(res.LatencyMean)
	floats(res.LatencyP50)
	floats(res.LatencyP90)
	floats(res.LatencyP99)
	ms(sim.Milestone{At: res.Recovered.At - r.Cell.Scenario.RecoverAt, Reached: res.Recovered.Reached})
	ints(res.LocalRejections)
	w.rows++
}

// TimelineWriter writes a timelines table: one row per tick of each run.
type TimelineWriter struct{ writer }

// NewTimelineWriter returns a writer of the timelines table to w.
func NewTimelineWriter(w io.Writer, meta dataset.Meta) *TimelineWriter {
	return &TimelineWriter{*newWriter(w, timelineFields(), fileMetadata(meta, dataset.TimelineSchema))}
}

// Append adds the timeline of run r: every tick where something happened
// (a request arrived, was answered in time, or a client gave up), so that
// the rows sum to the run's totals (sim.Timeline). Ticks where nothing did
// are left out: a run that waits out a long backoff would otherwise write
// thousands of rows of zeros.
func (w *TimelineWriter) Append(r grid.Run, tl *sim.Timeline) {
	rk, ck := r.Key(), r.Cell.Key()
	b := w.b
	for k := range tl.Arrivals {
		if tl.Arrivals[k] == 0 && tl.Served[k] == 0 && tl.GaveUp[k] == 0 {
			continue
		}
		b.Field(0).(*array.StringBuilder).Append(rk)
		b.Field(1).(*array.StringBuilder).Append(ck)
		b.Field(2).(*array.Int64Builder).Append(int64(r.Seed))
		b.Field(3).(*array.Int64Builder).Append(int64(k))
		b.Field(4).(*array.Float64Builder).Append((tl.Tick * time.Duration(k)).Seconds())
		b.Field(5).(*array.Int64Builder).Append(int64(tl.Arrivals[k]))
		b.Field(6).(*array.Int64Builder).Append(int64(tl.Served[k]))
		b.Field(7).(*array.Int64Builder).Append(int64(tl.GaveUp[k]))
		w.rows++
	}
}

// GroupsWriter writes a groups table: a mixed fleet's metrics per group.
type GroupsWriter struct{ writer }

// NewGroupsWriter returns a writer of the groups table to w.
func NewGroupsWriter(w io.Writer, meta dataset.Meta) *GroupsWriter {
	return &GroupsWriter{*newWriter(w, groupsFields(), fileMetadata(meta, dataset.GroupsSchema))}
}

// Append adds run r's groups; a run of one policy adds none.
func (w *GroupsWriter) Append(r grid.Run, res sim.Result) {
	rk, ck := r.Key(), r.Cell.Key()
	groups := r.Cell.Groups()
	b := w.b
	for g := range res.NGroups {
		gr, p := res.Groups[g], groups[g]
		b.Field(0).(*array.StringBuilder).Append(rk)
		b.Field(1).(*array.StringBuilder).Append(ck)
		b.Field(2).(*array.Int64Builder).Append(int64(r.Seed))
		b.Field(3).(*array.Int64Builder).Append(int64(g))
		b.Field(4).(*array.Float64Builder).Append(p.Share)
		b.Field(5).(*array.StringBuilder).Append(string(p.Policy.Kind))
		appendString(b.Field(6).(*array.StringBuilder), p.Policy.Preset, w.schema.Field(6).Nullable) // the preset: null for none
		b.Field(7).(*array.StringBuilder).Append(p.Policy.Describe())
		for i, v := range []int64{int64(gr.Clients), int64(gr.Succeeded), int64(gr.GaveUp), gr.Sent, gr.SentAfterRecovery} {
			b.Field(8 + i).(*array.Int64Builder).Append(v)
		}
		milestone(b.Field(13).(*array.Float64Builder), gr.T50)
		milestone(b.Field(14).(*array.Float64Builder), gr.T99)
		milestone(b.Field(15).(*array.Float64Builder), gr.AllDone)
		w.rows++
	}
}
