package dataset

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/experiments"
)

// Want names the runs a selective read keeps: the rows whose cell key is
// in Cells. A kept row's cell is the one Cells maps its key to (the same
// parameters, as the key is their hash), so the parameter columns are not
// read, only the keys, the seed and the results. Bounds give, per numeric column, the least and greatest value
// those cells hold: a row group whose statistics show all its values of a
// column outside that column's bound holds none of the cells and is not
// read at all (only the file's footer is).
type Want struct {
	Cells map[string]experiments.Cell
	// Sim, when set, is the simulator version of every wanted cell (its
	// keys hash it): a file of another version holds none of them and is
	// not read beyond its footer.
	Sim    string
	Bounds map[string]Bound
}

// Bound is the closed interval [Lo, Hi] of a column's wanted values.
type Bound struct{ Lo, Hi float64 }

// Selected says how much of a file a selective read touched.
type Selected struct {
	RowGroups int // in the file
	Pruned    int // skipped by their statistics, unread
	Scanned   int // whose cell keys were read, holding none of the cells
	Read      int // read whole: they hold some of the cells
}

// ReadRunsOf reads the rows of a runs file whose cell key is in want.Cells,
// row group by row group: a row group the bounds rule out by its
// statistics is skipped, of the others only the cell_key column is read,
// and the result columns only of those that hold a wanted cell. The
// records are ReadRuns's, field for field. The file's
// schema is checked as ReadRuns checks it, so a file ReadRuns refuses is
// refused here too, even when none of its rows is wanted.
func ReadRunsOf(r parquet.ReaderAtSeeker, want Want) (recs []Record, meta Meta, sel Selected, err error) {
	defer recoverCorrupt(&err)
	fields := runsFields()
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, Meta{}, sel, fmt.Errorf("not a Parquet file: %w", err)
	}
	defer pf.Close()
	meta = fileMeta(pf)
	if err := checkSchema(meta, RunsSchema); err != nil {
		return nil, meta, sel, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, meta, sel, fmt.Errorf("corrupt Parquet file: %w", err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, meta, sel, fmt.Errorf("corrupt Parquet file: %w", err)
	}
	if _, err := checkColumns(sc, fields, nil); err != nil {
		return nil, meta, sel, err
	}
	resFields := resultFields(fields)
	resNames := make([]string, len(resFields))
	for i, f := range resFields {
		resNames[i] = f.Name
	}
	resIdx, err := checkColumns(sc, fields, resNames)
	if err != nil {
		return nil, meta, sel, err
	}
	if err := checkChunks(pf, r); err != nil {
		return nil, meta, sel, err
	}
	keyIdx, err := checkColumns(sc, fields, []string{ColCellKey})
	if err != nil {
		return nil, meta, sel, err
	}
	md := pf.MetaData()
	sel.RowGroups = md.NumRowGroups()
	if want.Sim != "" && meta.Sim != want.Sim {
		sel.Pruned = sel.RowGroups
		return nil, meta, sel, nil
	}
	for rg := range md.NumRowGroups() {
		if excluded(md, rg, want.Bounds) {
			sel.Pruned++
			continue
		}
		var rows []int // rows of the row group whose cell is wanted
		row := 0
		err := scanRowGroup(fr, keyIdx, rg, func(rec arrow.RecordBatch) error {
			a := rec.Column(0).(*array.String)
			for i := range a.Len() {
				if _, ok := want.Cells[a.Value(i)]; ok && a.IsValid(i) {
					rows = append(rows, row+i)
				}
			}
			row += a.Len()
			return nil
		})
		if err != nil {
			return nil, meta, sel, err
		}
		if len(rows) == 0 {
			sel.Scanned++
			continue
		}
		sel.Read++
		got, err := readRowGroupRows(fr, resIdx, resFields, rg, rows, want.Cells)
		if err != nil {
			return nil, meta, sel, err
		}
		if recs == nil {
			recs = got // most often the only row group: no copy
		} else {
			recs = append(recs, got...)
		}
	}
	return recs, meta, sel, nil
}

// resultFields are the runs table's columns that a record holds beside
// its cell: the keys, the seed and the results (not the times counted from
// recovery, which are derived).
func resultFields(fields []arrow.Field) []arrow.Field {
	var out []arrow.Field
	params := map[string]bool{ColLabel: true, ColPolicySpec: true}
	for _, p := range experiments.Params {
		params[p.Key] = true
	}
	for _, f := range fields {
		switch f.Name {
		case ColT50After, ColT90After, ColT99After, ColAllDoneAfter:
			continue
		}
		if !params[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

// readRowGroupRows reads the result columns of row group rg and returns
// the records of the given rows (ascending), as ReadRuns would, each with
// the cell its key names.
func readRowGroupRows(fr *pqarrow.FileReader, idx []int, fields []arrow.Field, rg int, rows []int, cells map[string]experiments.Cell) ([]Record, error) {
	tbl, err := fr.ReadRowGroups(context.Background(), idx, []int{rg})
	if err != nil {
		return nil, fmt.Errorf("corrupt Parquet file: %w", err)
	}
	defer tbl.Release()
	at := make([]int32, tbl.NumRows()) // row → 1 + its index in recs, 0 for a row not asked for
	recs := make([]Record, len(rows))
	for n, r := range rows {
		if r >= len(at) {
			return nil, fmt.Errorf("corrupt Parquet file: row group %d has %d rows, its cell keys %d", rg, len(at), r+1)
		}
		at[r] = int32(n + 1)
	}
	if err := eachValue(tbl, fields, func(name string, a arrow.Array, i, row int) error {
		if row >= len(at) || at[row] == 0 {
			return nil
		}
		return setField(&recs[at[row]-1], name, a, i)
	}); err != nil {
		return nil, err
	}
	labels := map[string]string{} // a cell's seeds come together: its label once
	for i := range recs {
		r := &recs[i]
		c, ok := cells[r.CellKey]
		if !ok {
			return nil, fmt.Errorf("row group %d: cell key %s, not the one read a moment ago (file changed while read?)", rg, r.CellKey)
		}
		l, ok := labels[r.CellKey]
		if !ok {
			l = c.Label()
			labels[r.CellKey] = l
		}
		r.Cell, r.Label = c, l
		r.Result.Clients = c.Scenario.Clients
	}
	return recs, nil
}

// excluded reports whether a row group's statistics show that every value
// of some bounded column lies outside its bound.
func excluded(md *metadata.FileMetaData, rg int, bounds map[string]Bound) bool {
	g := md.RowGroup(rg)
	for name, b := range bounds {
		c := md.Schema.ColumnIndexByName(name)
		if c < 0 || c >= g.NumColumns() {
			continue // an optional column this part lacks: no statistics
		}
		cc, err := g.ColumnChunk(c)
		if err != nil {
			continue
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasMinMax() {
			continue
		}
		var lo, hi float64
		switch s := st.(type) {
		case *metadata.Float64Statistics:
			lo, hi = s.Min(), s.Max()
		case *metadata.Int64Statistics:
			lo, hi = float64(s.Min()), float64(s.Max())
		default:
			continue
		}
		if hi < b.Lo || lo > b.Hi {
			return true
		}
	}
	return false
}
