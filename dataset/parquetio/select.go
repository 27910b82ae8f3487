package parquetio

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
)

// ReadRunsOf reads the rows of a runs file whose cell key is in want.Cells,
// row group by row group: a row group the bounds rule out by its
// statistics is skipped, of the others only the cell_key column is read,
// and the result columns only of those that hold a wanted cell. The
// records are ReadRuns's, field for field (but for the fields of the
// columns want.Results leaves out, which are zero). The file's
// schema is checked as ReadRuns checks it, so a file ReadRuns refuses is
// refused here too, even when none of its rows is wanted.
func ReadRunsOf(r parquet.ReaderAtSeeker, want dataset.Want) (recs []dataset.Record, meta dataset.Meta, sel dataset.Selected, err error) {
	f, meta, sel, err := FindRunsOf(r, want)
	if err != nil || f.Len() == 0 {
		return nil, meta, sel, err
	}
	recs = make([]dataset.Record, f.Len())
	for i := range recs {
		f.RecordInto(i, &recs[i])
	}
	return recs, meta, sel, nil
}

// FindRunsOf is ReadRunsOf without building the records: it finds the
// wanted runs and decodes their row groups' result columns, and builds a
// run's record only when Record asks for it. A record is over a kilobyte
// (a cell and a result), and a search often asks for a fraction of the
// runs it may ask for. A nil *Found holds no run.
func FindRunsOf(r parquet.ReaderAtSeeker, want dataset.Want) (*dataset.Found, dataset.Meta, dataset.Selected, error) {
	f, meta, sel, err := findRunsOf(r, want)
	if f == nil || err != nil {
		return nil, meta, sel, err
	}
	return f.Found, meta, sel, nil
}

func findRunsOf(r parquet.ReaderAtSeeker, want dataset.Want) (found *foundRuns, meta dataset.Meta, sel dataset.Selected, err error) {
	defer recoverCorrupt(&err)
	rf, meta, err := openRuns(r)
	if err != nil {
		return nil, meta, sel, err
	}
	defer rf.pf.Close()
	pf, fr, sc, fields := rf.pf, rf.fr, rf.sc, rf.fields
	resCols, err := resultColumns(want.Results)
	if err != nil {
		return nil, meta, sel, err
	}
	resNames := make([]string, len(resCols))
	for i, c := range resCols {
		resNames[i] = c.Name
	}
	resIdx, err := checkColumns(sc, fields, resNames)
	if err != nil {
		return nil, meta, sel, err
	}
	if err := checkChunks(pf, r); err != nil {
		return nil, meta, sel, err
	}
	keyIdx, err := checkColumns(sc, fields, []string{dataset.ColCellKey})
	if err != nil {
		return nil, meta, sel, err
	}
	md := pf.MetaData()
	sel.RowGroups = md.NumRowGroups()
	if want.Sim != "" && meta.Sim != want.Sim {
		sel.Pruned = sel.RowGroups
		return nil, meta, sel, nil
	}
	var kr *pqarrow.FileReader // made for the first row group not ruled out
	for rg := range md.NumRowGroups() {
		if excluded(md, rg, want.Bounds) {
			sel.Pruned++
			continue
		}
		if kr == nil {
			// The cell keys are read as a dictionary: each distinct key
			// is looked up once, and no string is built per row.
			kprops := pqarrow.ArrowReadProperties{BatchSize: 1 << 16}
			kprops.SetReadDict(md.Schema.ColumnIndexByName(dataset.ColCellKey), true)
			if kr, err = pqarrow.NewFileReader(pf, kprops, memory.DefaultAllocator); err != nil {
				return nil, meta, sel, fmt.Errorf("corrupt Parquet file: %w", err)
			}
		}
		rows, keys, err := wantedRows(kr, keyIdx, rg, want.Cells)
		if err != nil {
			return nil, meta, sel, err
		}
		if len(rows) == 0 {
			sel.Scanned++
			continue
		}
		sel.Read++
		if found == nil {
			found = &foundRuns{Found: &dataset.Found{}, cols: resCols, cells: want.Cells, labels: map[string]string{}}
			found.Runs = found
		}
		if err := found.read(fr, resIdx, rg, rows, keys); err != nil {
			return nil, meta, sel, err
		}
	}
	return found, meta, sel, nil
}

// resultColumns are the runs table's columns a record holds beside its
// cell, which a selective read decodes: the keys, the seed and the results,
// not the cell's own (dataset.TableColumn.OfCell: the wanted cell gives
// them, and wantedRows the cell key) nor those derived from others (no
// Set); only the seed and the named ones when names is not nil, each
// named one a result column (or the cell key, which wantedRows reads).
func resultColumns(names []string) ([]dataset.RunsColumn, error) {
	var all, out []dataset.RunsColumn
	for _, c := range dataset.RunsTable() {
		if !c.OfCell && c.Set != nil {
			all = append(all, c)
		}
	}
	for _, n := range names {
		if n != dataset.ColCellKey && !slices.ContainsFunc(all, func(c dataset.RunsColumn) bool { return c.Name == n }) {
			return nil, fmt.Errorf("dataset: %q is not a result column of the runs table", n)
		}
	}
	for _, c := range all {
		if names == nil || c.Name == dataset.ColSeed || slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

// wantedRows returns the rows of row group rg whose cell key is in cells,
// ascending, and their keys. kr reads the cell_key column (index idx) as a
// dictionary, which the Parquet library builds however the column was
// encoded (tested with plain-encoded keys).
func wantedRows(kr *pqarrow.FileReader, idx []int, rg int, cells map[string]grid.Cell) (rows []int, keys []string, err error) {
	row := 0
	err = scanRowGroup(kr, idx, rg, func(rec arrow.RecordBatch) error {
		switch a := rec.Column(0).(type) {
		case *array.Dictionary:
			dict, ok := a.Dictionary().(*array.String)
			if !ok {
				return fmt.Errorf("corrupt Parquet file: column %q holds %s", dataset.ColCellKey, a.Dictionary().DataType())
			}
			wanted := make([]string, dict.Len()) // the key of a wanted entry, "" for the others
			some := false
			for j := range dict.Len() {
				if _, ok := cells[dict.Value(j)]; ok && dict.IsValid(j) {
					wanted[j], some = strings.Clone(dict.Value(j)), true
				}
			}
			for i := range a.Len() {
				if some && a.IsValid(i) {
					if k := wanted[a.GetValueIndex(i)]; k != "" {
						rows, keys = append(rows, row+i), append(keys, k)
					}
				}
			}
		default:
			return fmt.Errorf("corrupt Parquet file: column %q is %s", dataset.ColCellKey, a.DataType())
		}
		row += rec.Column(0).Len()
		return nil
	})
	return rows, keys, err
}

// foundRuns is the dataset.Found of FindRunsOf: the decoded result columns of
// the row groups that hold the runs found, from which a run's record is
// built when asked for.
type foundRuns struct {
	*dataset.Found
	at     []foundAt
	groups [][][]arrow.Array    // per row group read, per column, its chunks
	cols   []dataset.RunsColumn // the result columns read (resultColumns)
	cells  map[string]grid.Cell
	labels map[string]string // a cell's label, built once
}

// foundAt is where a found run's values are: its row group (an index in
// groups) and its row there.
type foundAt struct{ group, row int32 }

// RecordInto writes run i's record into r, as ReadRuns gives it (but for
// the fields of the columns Want.Results left out, which are zero). Every
// field is written: r may hold another record.
func (f *foundRuns) RecordInto(i int, r *dataset.Record) {
	*r = dataset.Record{}
	c := f.cells[f.Keys[i]]
	l, ok := f.labels[f.Keys[i]]
	if !ok {
		l = c.Label()
		f.labels[f.Keys[i]] = l
	}
	r.CellKey, r.Seed, r.Cell, r.Label = f.Keys[i], f.Seeds[i], c, l // the cell first: recovered_after_s reads its outage
	r.Result.Clients = c.Scenario.Clients
	at := f.at[i]
	for j, c := range f.cols {
		if c.Name == dataset.ColSeed {
			continue
		}
		row := int(at.row)
		for _, ch := range f.groups[at.group][j] {
			if row < ch.Len() {
				if err := c.Set(r, valueAt(ch, row)); err != nil {
					panic(fmt.Sprintf("parquetio: column %q: %v", c.Name, err)) // types and nulls were checked when read
				}
				break
			}
			row -= ch.Len()
		}
	}
}

// read decodes the result columns (indices idx, f.fields) of row group rg
// and adds its rows (ascending) with the given cell keys: their types,
// nulls and seeds are checked here, so that Record cannot fail.
func (f *foundRuns) read(fr *pqarrow.FileReader, idx []int, rg int, rows []int, keys []string) error {
	tbl, err := fr.ReadRowGroups(context.Background(), idx, []int{rg})
	if err != nil {
		return fmt.Errorf("corrupt Parquet file: %w", err)
	}
	g := make([][]arrow.Array, len(f.cols))
	var seeds []arrow.Array
	for j, c := range f.cols {
		col := column(tbl, c.Name)
		if col == nil && !c.Optional {
			return fmt.Errorf("no column %q", c.Name)
		} // an optional column the part lacks: zero, as ReadRuns leaves it
		t := arrowType(c.Type)
		for _, ch := range col {
			if !arrow.TypeEqual(ch.DataType(), t) {
				return fmt.Errorf("column %q is %s: want %s", c.Name, ch.DataType(), t)
			}
			if !c.Nullable && ch.NullN() > 0 {
				return fmt.Errorf("column %q: null in a column that has none", c.Name)
			}
		}
		g[j] = col
		if c.Name == dataset.ColSeed {
			seeds = col
		}
	}
	n := int(tbl.NumRows())
	gi := int32(len(f.groups))
	f.groups = append(f.groups, g)
	for k, row := range rows {
		if row >= n {
			return fmt.Errorf("corrupt Parquet file: row group %d has %d rows, its cell keys %d", rg, n, row+1)
		}
		s, at := uint32(0), row
		for _, ch := range seeds {
			if at < ch.Len() {
				if s, err = seed(ch.(*array.Int64).Value(at)); err != nil {
					return fmt.Errorf("column %q row %d: %w", dataset.ColSeed, row, err)
				}
				break
			}
			at -= ch.Len()
		}
		f.Keys, f.Seeds, f.at = append(f.Keys, keys[k]), append(f.Seeds, s), append(f.at, foundAt{gi, int32(row)})
	}
	return nil
}

// excluded reports whether a row group's statistics show that every value
// of some bounded column lies outside its bound.
func excluded(md *metadata.FileMetaData, rg int, bounds map[string]dataset.Bound) bool {
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
