package parquetio

import (
	"io"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
)

// CellsWriter writes a cells table: one row per cell, through its column
// list (dataset.CellsTable).
type CellsWriter struct {
	writer
	rw      *rowWriter[dataset.CellRow, dataset.CellRow]
	metrics int
}

// NewCellsWriter returns a writer of the cells table of the given metrics
// to w.
func NewCellsWriter(w io.Writer, meta dataset.Meta, metrics []string) *CellsWriter {
	cw := &CellsWriter{writer: *newWriter(w, arrowFields(dataset.CellsFields(metrics)), fileMetadata(meta, dataset.CellsSchema)), metrics: len(metrics)}
	cw.rw = newRowWriter(&cw.writer, dataset.CellsTable(metrics))
	return cw
}

// Append adds a cell: its key, label, sweeps and runs, and one Stat per
// metric, in the order the writer was given them.
func (w *CellsWriter) Append(key, label string, c grid.Cell, sweeps []string, runs int, stats []dataset.Stat) {
	if len(stats) != w.metrics {
		panic("dataset: CellsWriter.Append: one Stat per metric")
	}
	row := dataset.CellRow{Key: key, Label: label, Cell: &c, Sweeps: sweeps, Runs: runs, Stats: stats}
	w.rw.append(&row, true)
	w.rows++
}
