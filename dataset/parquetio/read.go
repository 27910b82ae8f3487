package parquetio

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/sim"
)

// ReadMeta returns a file's metadata without reading its rows.
func ReadMeta(r parquet.ReaderAtSeeker) (meta dataset.Meta, err error) {
	defer recoverCorrupt(&err)
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return dataset.Meta{}, fmt.Errorf("not a Parquet file: %w", err)
	}
	defer pf.Close()
	return fileMeta(pf), nil
}

// checkSchema refuses a file of another schema version than want.
func checkSchema(meta dataset.Meta, want string) error {
	if meta.Schema == want {
		return nil
	}
	got := meta.Schema
	if got == "" {
		got = "none"
	}
	return fmt.Errorf("schema %q: want %q (a file from another version of herdsweep, or not herdsweep's)", got, want)
}

// recoverCorrupt turns a panic inside the Parquet library, which some
// corrupt files provoke, into an error.
func recoverCorrupt(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("corrupt Parquet file: %v", p)
	}
}

func fileMeta(pf *file.Reader) dataset.Meta {
	m := dataset.Meta{TimelineRows: -1, GroupRows: -1}
	kv := pf.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		v := kv.Values()[i]
		switch k {
		case dataset.KeySchema:
			m.Schema = v
		case dataset.KeyTool:
			m.Tool = v
		case dataset.KeySim:
			m.Sim = v
		case dataset.KeyConfigHash:
			m.ConfigHash = v
		case dataset.KeyCommand:
			m.Command = v
		case dataset.KeyCreated:
			m.Created = v
		case dataset.KeySweep:
			m.Sweep = v
		case dataset.KeyPartTimelines:
			m.TimelineRows = count(v)
		case dataset.KeyPartGroups:
			m.GroupRows = count(v)
		}
	}
	return m
}

// count reads a manifest's row count; -1 when it is not one.
func count(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// readTable reads a whole file whose schema must be want and whose columns
// must have the types of fields (only the named columns are read when
// columns is not nil). A panic of the Parquet library on a corrupt file is
// returned as an error.
func readTable(r parquet.ReaderAtSeeker, want string, fields []arrow.Field, columns []string) (tbl arrow.Table, meta dataset.Meta, err error) {
	defer func() {
		if p := recover(); p != nil {
			if tbl != nil {
				tbl.Release()
			}
			tbl, err = nil, fmt.Errorf("corrupt Parquet file: %v", p)
		}
	}()
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, dataset.Meta{}, fmt.Errorf("not a Parquet file: %w", err)
	}
	defer pf.Close()
	meta = fileMeta(pf)
	if err := checkSchema(meta, want); err != nil {
		return nil, meta, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, meta, fmt.Errorf("corrupt Parquet file: %w", err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, meta, fmt.Errorf("corrupt Parquet file: %w", err)
	}
	idx, err := checkColumns(sc, fields, columns)
	if err != nil {
		return nil, meta, err
	}
	if columns == nil {
		tbl, err = fr.ReadTable(context.Background())
	} else {
		tbl, err = readColumns(fr, idx)
	}
	if err != nil {
		return nil, meta, fmt.Errorf("corrupt Parquet file: %w", err)
	}
	if tbl.NumRows() != pf.NumRows() {
		n := tbl.NumRows()
		tbl.Release()
		return nil, meta, fmt.Errorf("corrupt Parquet file: %d rows read of %d", n, pf.NumRows())
	}
	return tbl, meta, nil
}

// checkColumns checks that each of the named columns (every one of fields
// when columns is nil) is in sc once, with its type, and returns their
// indices in sc.
func checkColumns(sc *arrow.Schema, fields []arrow.Field, columns []string) ([]int, error) {
	if columns == nil {
		for _, f := range fields {
			columns = append(columns, f.Name)
		}
	}
	var idx []int
	for _, c := range columns {
		is := sc.FieldIndices(c)
		if len(is) == 0 && dataset.OptionalColumn(c) {
			continue
		}
		if len(is) != 1 {
			return nil, fmt.Errorf("no column %q (a file written by another tool?)", c)
		}
		for _, f := range fields {
			if f.Name == c && !arrow.TypeEqual(f.Type, sc.Field(is[0]).Type) {
				return nil, fmt.Errorf("column %q is %s: want %s", c, sc.Field(is[0]).Type, f.Type)
			}
		}
		idx = append(idx, is[0])
	}
	return idx, nil
}

func readColumns(fr *pqarrow.FileReader, idx []int) (arrow.Table, error) {
	rr, err := fr.GetRecordReader(context.Background(), idx, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var recs []arrow.RecordBatch
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	tbl := array.NewTableFromRecords(rr.Schema(), recs)
	for _, rec := range recs {
		rec.Release()
	}
	return tbl, nil
}

// column returns the chunks of column name in tbl.
func column(tbl arrow.Table, name string) []arrow.Array {
	is := tbl.Schema().FieldIndices(name)
	if len(is) == 0 {
		return nil
	}
	return tbl.Column(is[0]).Data().Chunks()
}

// eachValue calls set for every value of the named fields of tbl, field by
// field, with the value's row number.
func eachValue(tbl arrow.Table, fields []arrow.Field, set func(field string, a arrow.Array, i, row int) error) error {
	for _, f := range fields {
		chunks := column(tbl, f.Name)
		if chunks == nil && dataset.OptionalColumn(f.Name) {
			continue
		}
		if chunks == nil {
			return fmt.Errorf("no column %q", f.Name)
		}
		row := 0
		for _, ch := range chunks {
			if !arrow.TypeEqual(ch.DataType(), f.Type) {
				return fmt.Errorf("column %q is %s: want %s", f.Name, ch.DataType(), f.Type)
			}
			for i := range ch.Len() {
				if !f.Nullable && ch.IsNull(i) {
					return fmt.Errorf("column %q row %d: null in a column that has none", f.Name, row)
				}
				if err := set(f.Name, ch, i, row); err != nil {
					return fmt.Errorf("column %q row %d: %w", f.Name, row, err)
				}
				row++
			}
		}
	}
	return nil
}

// ReadRunKeys returns the run_key column of a runs file: what a resumed
// sweep skips.
func ReadRunKeys(r parquet.ReaderAtSeeker) ([]string, dataset.Meta, error) {
	return ReadKeys(r, dataset.RunsDir)
}

// ReadKeys returns the run_key column of a file of the given table (RunsDir,
// TimelinesDir or GroupsDir), one per row.
func ReadKeys(r parquet.ReaderAtSeeker, table string) ([]string, dataset.Meta, error) {
	schema, fields := dataset.RunsSchema, runsFields()
	switch table {
	case dataset.TimelinesDir:
		schema, fields = dataset.TimelineSchema, timelineFields()
	case dataset.GroupsDir:
		schema, fields = dataset.GroupsSchema, groupsFields()
	}
	fields = fields[:1]
	tbl, meta, err := readTable(r, schema, fields, []string{dataset.ColRunKey})
	if err != nil {
		return nil, meta, err
	}
	defer tbl.Release()
	keys := make([]string, 0, tbl.NumRows())
	err = eachValue(tbl, fields, func(_ string, a arrow.Array, i, _ int) error {
		keys = append(keys, a.(*array.String).Value(i))
		return nil
	})
	if err != nil {
		return nil, meta, err
	}
	return keys, meta, nil
}

// ReadRuns reads every row of a runs file.
func ReadRuns(r parquet.ReaderAtSeeker) ([]dataset.Record, dataset.Meta, error) {
	tbl, meta, err := readTable(r, dataset.RunsSchema, runsFields(), nil)
	if err != nil {
		return nil, meta, err
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	recs := make([]dataset.Record, n)
	for i := range recs {
		recs[i].Cell.Scenario = sim.Article()
	}
	if err := readRows(tbl, dataset.RunsTable(), func(row int) *dataset.Record { return &recs[row] }); err != nil {
		return nil, meta, err
	}
	for i := range recs {
		recs[i].Result.Clients = recs[i].Cell.Scenario.Clients
	}
	return recs, meta, nil
}

// seed checks that a seed column's value is a Mulberry32 seed.
func seed(v int64) (uint32, error) { return dataset.Seed(v) }

// ReadTimelines reads every row of a timelines file.
func ReadTimelines(r parquet.ReaderAtSeeker) ([]dataset.TimelineRow, dataset.Meta, error) {
	return ReadTimelinesOf(r, nil)
}

// ReadTimelinesOf reads the rows of a timelines file whose run_key is in
// keys (every row when keys is nil).
func ReadTimelinesOf(r parquet.ReaderAtSeeker, keys map[string]bool) ([]dataset.TimelineRow, dataset.Meta, error) {
	fields := timelineFields()
	tbl, meta, err := readTable(r, dataset.TimelineSchema, fields, nil)
	if err != nil {
		return nil, meta, err
	}
	defer tbl.Release()
	var keep []int // row numbers to read
	row := 0
	err = eachValue(tbl, fields[:1], func(_ string, a arrow.Array, i, _ int) error {
		if keys == nil || keys[a.(*array.String).Value(i)] {
			keep = append(keep, row)
		}
		row++
		return nil
	})
	if err != nil {
		return nil, meta, err
	}
	out := make([]int, row) // row → index in rows, -1 for a row not asked for
	for r := range out {
		out[r] = -1
	}
	for n, r := range keep {
		out[r] = n
	}
	rows := make([]dataset.TimelineRow, len(keep))
	err = readRows(tbl, dataset.TimelineTable(), func(row int) *dataset.TimelineRow {
		if out[row] < 0 {
			return nil
		}
		return &rows[out[row]]
	})
	if err != nil {
		return nil, meta, err
	}
	return rows, meta, nil
}

// ReadGroups reads every row of a groups file.
func ReadGroups(r parquet.ReaderAtSeeker) ([]dataset.GroupRow, dataset.Meta, error) {
	tbl, meta, err := readTable(r, dataset.GroupsSchema, groupsFields(), nil)
	if err != nil {
		return nil, meta, err
	}
	defer tbl.Release()
	rows := make([]dataset.GroupRow, tbl.NumRows())
	if err := readRows(tbl, dataset.GroupsTable(), func(row int) *dataset.GroupRow { return &rows[row] }); err != nil {
		return nil, meta, err
	}
	return rows, meta, nil
}
