package parquetio

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
)

// runsBatch is the Batch of ScanRuns: a slice of consecutive rows of a
// runs file holding only the columns a scan asked for. Its arrays are
// valid only during the call that receives it.
type runsBatch struct {
	rec  arrow.RecordBatch
	cols map[string]int
	// absent are the columns asked for that the file lacks (dataset.OptionalColumn):
	// each reads as its zero, or null where nullable, as ReadRuns reads them.
	absent map[string]arrow.Field
	zeros  map[string]arrow.Array
}

func (b *runsBatch) Len() int { return int(b.rec.NumRows()) }

func (b *runsBatch) Strings(name string) dataset.StringColumn {
	return nullAsEmpty{b.col(name).(*array.String)}
}

// nullAsEmpty is a string column whose nulls read as "": a column that
// stores none as null (the preset) reads as parts written before did.
type nullAsEmpty struct{ *array.String }

func (c nullAsEmpty) Value(i int) string {
	if c.IsNull(i) {
		return ""
	}
	return c.String.Value(i)
}

func (b *runsBatch) Int64s(name string) dataset.Int64Column { return b.col(name).(*array.Int64) }

func (b *runsBatch) Float64s(name string) dataset.Float64Column { return b.col(name).(*array.Float64) }

func (b *runsBatch) Column(name string) any {
	if a, ok := b.col(name).(*array.String); ok {
		return nullAsEmpty{a}
	}
	return b.col(name)
}

func (b *runsBatch) col(name string) arrow.Array {
	i, ok := b.cols[name]
	if !ok {
		if f, ok := b.absent[name]; ok {
			return b.zero(f)
		}
		panic(fmt.Sprintf("dataset: column %q was not asked for", name))
	}
	return b.rec.Column(i)
}

// zero is the column f, absent from the file, for the batch's rows.
func (b *runsBatch) zero(f arrow.Field) arrow.Array {
	if a := b.zeros[f.Name]; a != nil && a.Len() == b.Len() {
		return a
	}
	var a arrow.Array
	if f.Nullable {
		a = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, b.Len())
	} else {
		bld := array.NewBuilder(memory.DefaultAllocator, f.Type)
		bld.AppendEmptyValues(b.Len())
		a = bld.NewArray()
	}
	if b.zeros == nil {
		b.zeros = map[string]arrow.Array{}
	}
	b.zeros[f.Name] = a
	return a
}

func (b *runsBatch) Seed(i int) (uint32, error) {
	return seed(b.col(dataset.ColSeed).(*array.Int64).Value(i))
}

// ScanRuns reads the named columns of a runs file, row group by row group,
// in batches of at most 65,536 rows, and calls fn with each batch in row
// order: memory holds one batch of those columns, never the whole file.
// Each column's type is checked against the schema before anything is
// read, and a null in a column that has none is an error, so fn may use the
// typed accessors without checking. A panic of the Parquet library on a
// corrupt file is returned as an error. An error from fn stops the scan
// and is returned as is.
func ScanRuns(r parquet.ReaderAtSeeker, columns []string, fn func(dataset.Batch) error) (meta dataset.Meta, err error) {
	var fnErr error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt Parquet file: %v", p)
		}
	}()
	f, meta, err := openRuns(r)
	if err != nil {
		return meta, err
	}
	defer f.pf.Close()
	if err := checkChunks(f.pf, r); err != nil {
		return meta, err
	}
	if columns == nil {
		columns = []string{}
	}
	idx, err := checkColumns(f.sc, f.fields, columns)
	if err != nil {
		return meta, err
	}
	cols, absent := scanned(f, columns)
	zeros := map[string]arrow.Array{}
	var rows int64
	for rg := range f.pf.NumRowGroups() {
		if err := scanRowGroup(f.fr, idx, rg, func(rec arrow.RecordBatch) error {
			for _, c := range columns {
				if i, ok := cols[c]; ok && !f.nullable[c] && rec.Column(i).NullN() > 0 {
					return fmt.Errorf("column %q: null in a column that has none", c)
				}
			}
			rows += rec.NumRows()
			if err := fn(&runsBatch{rec: rec, cols: cols, absent: absent, zeros: zeros}); err != nil {
				fnErr = err
				return err
			}
			return nil
		}); err != nil {
			if fnErr != nil {
				return meta, fnErr
			}
			return meta, err
		}
	}
	if len(columns) > 0 && rows != f.pf.NumRows() {
		return meta, fmt.Errorf("corrupt Parquet file: %d rows read of %d", rows, f.pf.NumRows())
	}
	return meta, nil
}

// runsFile is a runs file opened for a scan or a selective read.
type runsFile struct {
	pf       *file.Reader
	fr       *pqarrow.FileReader
	sc       *arrow.Schema
	fields   []arrow.Field // the runs table's
	nullable map[string]bool
}

// openRuns opens a runs file and checks its schema: its version and every
// column, not only those read (a file whose other columns are wrong is not
// the runs table, and the report should say so as readers of every column
// do). The caller closes f.pf; a panic of the Parquet library on a corrupt
// file is the caller's to recover.
func openRuns(r parquet.ReaderAtSeeker) (f *runsFile, meta dataset.Meta, err error) {
	f = &runsFile{fields: runsFields(), nullable: map[string]bool{}}
	for _, fd := range f.fields {
		f.nullable[fd.Name] = fd.Nullable
	}
	if f.pf, err = file.NewParquetReader(r); err != nil {
		return nil, dataset.Meta{}, fmt.Errorf("not a Parquet file: %w", err)
	}
	meta = fileMeta(f.pf)
	fail := func(err error) (*runsFile, dataset.Meta, error) {
		f.pf.Close()
		return nil, meta, err
	}
	if err := checkSchema(meta, dataset.RunsSchema); err != nil {
		return fail(err)
	}
	if f.fr, err = pqarrow.NewFileReader(f.pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator); err != nil {
		return fail(fmt.Errorf("corrupt Parquet file: %w", err))
	}
	if f.sc, err = f.fr.Schema(); err != nil {
		return fail(fmt.Errorf("corrupt Parquet file: %w", err))
	}
	if _, err := checkColumns(f.sc, f.fields, nil); err != nil {
		return fail(err)
	}
	return f, meta, nil
}

// scanned says where each of the columns a scan asked for is in its
// batches, and which the file lacks (optional: checkColumns said so),
// which read as zero.
func scanned(f *runsFile, columns []string) (cols map[string]int, absent map[string]arrow.Field) {
	cols = make(map[string]int, len(columns))
	for _, c := range columns {
		if len(f.sc.FieldIndices(c)) > 0 {
			cols[c] = len(cols)
			continue
		}
		if absent == nil {
			absent = map[string]arrow.Field{}
		}
		for _, fd := range f.fields {
			if fd.Name == c {
				absent[c] = fd
			}
		}
	}
	return cols, absent
}

// checkChunks checks that every column chunk of every row group lies
// within the file, its dictionary page before its data pages, and holds as
// many values as its row group has rows: a scan reads only some columns,
// and a corrupt one it does not read must not go unnoticed.
func checkChunks(pf *file.Reader, r io.Seeker) error {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	md := pf.MetaData()
	for rg := range md.NumRowGroups() {
		g := md.RowGroup(rg)
		for c := range g.NumColumns() {
			cc, err := g.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("corrupt Parquet file: row group %d column %d: %w", rg, c, err)
			}
			start, n := cc.DataPageOffset(), cc.TotalCompressedSize()
			if cc.HasDictionaryPage() {
				if d := cc.DictionaryPageOffset(); d < 4 || d >= start {
					return fmt.Errorf("corrupt Parquet file: column %q row group %d: dictionary page at %d, data pages at %d", cc.PathInSchema(), rg, d, start)
				}
				start = cc.DictionaryPageOffset()
			}
			if start < 4 || n < 0 || start+n > size || cc.NumValues() != g.NumRows() {
				return fmt.Errorf("corrupt Parquet file: column %q row group %d: %d bytes at %d of a %d-byte file, %d values of %d rows", cc.PathInSchema(), rg, n, start, size, cc.NumValues(), g.NumRows())
			}
		}
	}
	return nil
}

func scanRowGroup(fr *pqarrow.FileReader, idx []int, rg int, fn func(arrow.RecordBatch) error) error {
	if len(idx) == 0 {
		return nil
	}
	rr, err := fr.GetRecordReader(context.Background(), idx, []int{rg})
	if err != nil {
		return fmt.Errorf("corrupt Parquet file: %w", err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("corrupt Parquet file: %w", err)
	}
	return nil
}
