package grid

// LastCell tells a run's cell from the last run's, for a writer that does
// work once per cell as a sweep hands out a cell's seeds in a row. Cells
// compare by value (a thousand bytes of parameters, ~120 ns) unless the
// caller numbers them: runs given one number > 0 have one cell (a sweep's
// cells are distinct, Sweep.Distinct), and a number that differs from the
// last is taken as a new cell without a look. Taking the same cell for a
// new one only repeats the work once per cell; the reverse never happens.
type LastCell struct {
	cell Cell
	id   int
	ok   bool
}

// Changed reports whether c, numbered id (0: not numbered), is not the
// last cell, and makes it the last.
func (l *LastCell) Changed(c *Cell, id int) bool {
	same := l.ok && id == l.id && (id != 0 || *c == l.cell)
	if !same {
		l.cell, l.id, l.ok = *c, id, true
	}
	return !same
}

// Cell is the last cell.
func (l *LastCell) Cell() *Cell { return &l.cell }
