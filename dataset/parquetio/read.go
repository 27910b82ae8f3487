package parquetio

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
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
	if err := eachValue(tbl, runsFields(), func(name string, a arrow.Array, i, row int) error {
		return setField(&recs[row], name, a, i)
	}); err != nil {
		return nil, meta, err
	}
	for i := range recs {
		recs[i].Result.Clients = recs[i].Cell.Scenario.Clients
	}
	return recs, meta, nil
}

func setField(r *dataset.Record, name string, a arrow.Array, i int) error {
	str := func() string { return stringAt(a, i) }
	i64 := func() int64 { return a.(*array.Int64).Value(i) }
	f64 := func() float64 { return a.(*array.Float64).Value(i) }
	ms := func() sim.Milestone {
		if a.IsNull(i) {
			return sim.Milestone{}
		}
		return sim.Milestone{At: seconds(f64()), Reached: true}
	}
	switch name {
	case dataset.ColRunKey:
		r.RunKey = str()
	case dataset.ColCellKey:
		r.CellKey = str()
	case dataset.ColSeed:
		s, err := seed(i64())
		if err != nil {
			return err
		}
		r.Seed = s
	case dataset.ColLabel:
		r.Label = str()
	case dataset.ColPolicySpec:
		// derived from the parameters
	case dataset.ColSent:
		r.Result.Sent = i64()
	case dataset.ColSentAfterRecovery:
		r.Result.SentAfterRecovery = i64()
	case dataset.ColPeakArrivals:
		r.Result.PeakArrivals = int(i64())
	case dataset.ColPeakRPS:
		r.Result.PeakRPS = f64()
	case dataset.ColT50:
		r.Result.T50 = ms()
	case dataset.ColT90:
		r.Result.T90 = ms()
	case dataset.ColT99:
		r.Result.T99 = ms()
	case dataset.ColAllDone:
		r.Result.AllDone = ms()
	case dataset.ColT50After, dataset.ColT90After, dataset.ColT99After, dataset.ColAllDoneAfter:
		// derived from the milestones and recover_s
	case dataset.ColSucceeded:
		r.Result.Succeeded = int(i64())
	case dataset.ColGaveUp:
		r.Result.GaveUp = int(i64())
	case dataset.ColPending:
		r.Result.Pending = int(i64())
	case dataset.ColEnd:
		r.Result.End = seconds(f64())
	case dataset.ColGoodput:
		r.Result.Goodput = i64()
	case dataset.ColTimedOut:
		r.Result.TimedOut = i64()
	case dataset.ColRejected:
		r.Result.Rejected = i64()
	case dataset.ColOffered:
		r.Result.Offered = i64()
	case dataset.ColOfferedGaveUp:
		r.Result.OfferedGaveUp = i64()
	case dataset.ColBusy:
		r.Result.BusyMS = f64()
	case dataset.ColWasted:
		r.Result.WastedMS = f64()
	case dataset.ColLatencyMean:
		r.Result.LatencyMean = f64()
	case dataset.ColLatencyP50:
		r.Result.LatencyP50 = f64()
	case dataset.ColLatencyP90:
		r.Result.LatencyP90 = f64()
	case dataset.ColLatencyP99:
		r.Result.LatencyP99 = f64()
	case dataset.ColRecoveredAfter:
		// derived from the milestone Recovered and recover_s: kept after recovery
		m := ms()
		if m.Reached {
			m.At += r.Cell.Scenario.RecoverAt
		}
		r.Result.Recovered = m
	case dataset.ColLocalRejections:
		r.Result.LocalRejections = i64()
	default:
		p := grid.ParamByKey(name)
		if p == nil {
			return fmt.Errorf("unknown column")
		}
		var v any
		switch x := a.(type) {
		case *array.Int64:
			v = x.Value(i)
		case *array.Float64:
			v = x.Value(i)
		case *array.String:
			v = x.Value(i)
		case *array.Boolean:
			v = x.Value(i)
		default:
			return fmt.Errorf("type %s", a.DataType())
		}
		p.Set(&r.Cell, v)
	}
	return nil
}

// seed checks that a seed column's value is a Mulberry32 seed.
func seed(v int64) (uint32, error) {
	if v < 0 || v > math.MaxUint32 {
		return 0, fmt.Errorf("seed %d: want a whole number in [0, %d]", v, uint32(math.MaxUint32))
	}
	return uint32(v), nil
}

func seconds(s float64) time.Duration { return time.Duration(s*1e9 + 0.5) }

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
	err = eachValue(tbl, fields, func(name string, ch arrow.Array, i, row int) error {
		if out[row] < 0 {
			return nil
		}
		t := &rows[out[row]]
		switch name {
		case dataset.ColRunKey:
			t.RunKey = ch.(*array.String).Value(i)
		case dataset.ColCellKey:
			t.CellKey = ch.(*array.String).Value(i)
		case dataset.ColSeed:
			s, err := seed(ch.(*array.Int64).Value(i))
			if err != nil {
				return err
			}
			t.Seed = s
		case dataset.ColTick:
			t.Tick = int(ch.(*array.Int64).Value(i))
		case dataset.ColTime:
			t.T = ch.(*array.Float64).Value(i)
		case dataset.ColArrivals:
			t.Arrivals = int(ch.(*array.Int64).Value(i))
		case dataset.ColServed:
			t.Served = int(ch.(*array.Int64).Value(i))
		case dataset.ColGaveUp:
			t.GaveUp = int(ch.(*array.Int64).Value(i))
		}
		return nil
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
	err = eachValue(tbl, groupsFields(), func(name string, ch arrow.Array, i, row int) error {
		g := &rows[row]
		str := func() string { return stringAt(ch, i) }
		i64 := func() int64 { return ch.(*array.Int64).Value(i) }
		ms := func() sim.Milestone {
			if ch.IsNull(i) {
				return sim.Milestone{}
			}
			return sim.Milestone{At: seconds(ch.(*array.Float64).Value(i)), Reached: true}
		}
		switch name {
		case dataset.ColRunKey:
			g.RunKey = str()
		case dataset.ColCellKey:
			g.CellKey = str()
		case dataset.ColSeed:
			s, err := seed(i64())
			if err != nil {
				return err
			}
			g.Seed = s
		case dataset.ColGroup:
			g.Group = int(i64())
		case dataset.ColShare:
			g.Share = ch.(*array.Float64).Value(i)
		case dataset.ColPolicy:
			g.Policy = str()
		case dataset.ColPreset:
			g.Preset = str()
		case dataset.ColLabel:
			g.Label = str()
		case dataset.ColClients:
			g.Result.Clients = int(i64())
		case dataset.ColSucceeded:
			g.Result.Succeeded = int(i64())
		case dataset.ColGaveUp:
			g.Result.GaveUp = int(i64())
		case dataset.ColSent:
			g.Result.Sent = i64()
		case dataset.ColSentAfterRecovery:
			g.Result.SentAfterRecovery = i64()
		case dataset.ColT50:
			g.Result.T50 = ms()
		case dataset.ColT99:
			g.Result.T99 = ms()
		case dataset.ColAllDone:
			g.Result.AllDone = ms()
		}
		return nil
	})
	if err != nil {
		return nil, meta, err
	}
	return rows, meta, nil
}

// stringAt is row i of a string column; a null reads as "", as parts
// written before a column stored null for none (the preset) hold it.
func stringAt(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	return a.(*array.String).Value(i)
}
