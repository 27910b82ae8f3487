package parquetio

import (
	"encoding/binary"
	"math"

	"github.com/herdsweep/herdsweep/dataset"
)

// A column of a cell's values (dataset.TableColumn.OfCell) holds a value
// per run of rows, not per row: a sweep of tiny runs writes tens of such
// columns for each run, thousands of rows apiece, and expanding every
// run to its rows only for the encoder to find the runs again was a
// quarter of what the writer spent. Such a colBuf (byRun) keeps a value
// per run that is not null in its slice of values, with runLen and
// runNull holding each run's rows and nullness; equal neighbours are one
// run. The row writer's other columns start so too (adaptive) and turn
// into columns of rows once their runs are short (flatten): a metric that
// is the same in every run of a part (a queueing server's, on a counting
// one) stays a run. The encoder writes such a column as a dictionary straight from its
// runs, with the same bytes as the column of rows it stands for
// (TestByRunEncodesAsRows), and expands a span whose runs are too short
// to be a dictionary (expand).

// appendRun appends v to n rows of a byRun column.
func (c *colBuf) appendRun(v *dataset.Value, n int) {
	if n <= 0 {
		return
	}
	null := v.Null || c.kind == dataset.Utf8 && c.nullEmpty && v.Str == ""
	c.rows += n
	if null {
		c.nulls += n
	}
	if k := len(c.runLen) - 1; k >= 0 && c.runNull[k] == null && (null || c.lastIs(v)) {
		c.runLen[k] += n
		return
	}
	c.runLen, c.runNull = append(c.runLen, n), append(c.runNull, null)
	if !null {
		c.push(v)
	}
}

// appendSame appends v to n rows, whichever way the column holds them.
func (c *colBuf) appendSame(v *dataset.Value, n int) {
	if c.byRun {
		c.appendRun(v, n)
	} else {
		c.appendN(v, n)
	}
}

// lastIs reports whether v is the last value of a byRun column: the
// same bits, as the encoder's runs compare them.
func (c *colBuf) lastIs(v *dataset.Value) bool {
	switch c.kind {
	case dataset.Float64:
		return len(c.f64) > 0 && math.Float64bits(c.f64[len(c.f64)-1]) == math.Float64bits(v.Float)
	case dataset.Int64:
		return len(c.i64) > 0 && c.i64[len(c.i64)-1] == v.Int
	case dataset.Utf8:
		return len(c.str) > 0 && c.str[len(c.str)-1] == v.Str
	}
	return len(c.bools) > 0 && c.bools[len(c.bools)-1] == v.Bool
}

// flatten turns an adaptive byRun column into a column of rows, with room
// for the rows its writer expects.
func (c *colBuf) flatten() {
	x := c.expand(0, c.rows)
	x.plain = c.plain
	x.reserve(c.hint - x.rows)
	*c = *x
}

// sameAsLast reports whether the number v is the last value of a byRun
// column whose last run is not null (false for a string or a boolean:
// appendRun compares those).
func (c *colBuf) sameAsLast(v *dataset.Value) bool {
	switch c.kind {
	case dataset.Float64:
		return math.Float64bits(c.f64[len(c.f64)-1]) == math.Float64bits(v.Float)
	case dataset.Int64:
		return c.i64[len(c.i64)-1] == v.Int
	}
	return false
}

// runSpan is the runs of a byRun column that meet the rows [lo, hi): each
// run is visited with the rows it has there, its nullness and the index
// of its value (when not null).
func (c *colBuf) runSpan(lo, hi int, visit func(n int, null bool, v int)) {
	row, v := 0, 0
	for k, n := range c.runLen {
		if a, b := max(row, lo), min(row+n, hi); a < b {
			visit(b-a, c.runNull[k], v)
		}
		row += n
		if !c.runNull[k] {
			v++
		}
		if row >= hi {
			return
		}
	}
}

// nullsIn counts the null rows of a byRun column in [lo, hi).
func (c *colBuf) nullsIn(lo, hi int) int {
	nulls := 0
	c.runSpan(lo, hi, func(n int, null bool, _ int) {
		if null {
			nulls += n
		}
	})
	return nulls
}

// expand returns the rows [lo, hi) of a byRun column as a column of rows.
func (c *colBuf) expand(lo, hi int) *colBuf {
	out := &colBuf{kind: c.kind, optional: c.optional, nullEmpty: c.nullEmpty}
	c.runSpan(lo, hi, func(n int, null bool, v int) {
		out.appendN(c.valueAt(v, null), n)
	})
	return out
}

// valueAt is value v of the column (null when null).
func (c *colBuf) valueAt(v int, null bool) *dataset.Value {
	switch {
	case null:
		return &dataset.Value{Null: true}
	case c.kind == dataset.Float64:
		return &dataset.Value{Float: c.f64[v]}
	case c.kind == dataset.Int64:
		return &dataset.Value{Int: c.i64[v]}
	case c.kind == dataset.Utf8:
		return &dataset.Value{Str: c.str[v]}
	}
	return &dataset.Value{Bool: c.bools[v]}
}

// runDictionary reports whether the rows [lo, hi) of a byRun column are
// written as a dictionary, by the rule of colBuf.dictionary: runs of equal
// values (nulls left out, as the values of a page have none) eight long on
// average.
func (c *colBuf) runDictionary(lo, hi, values int) bool {
	if c.plain || c.kind == dataset.Bool || values == 0 {
		return false
	}
	runs, last := 0, -1
	c.runSpan(lo, hi, func(_ int, null bool, v int) {
		if !null && (last < 0 || !c.sameValues(last, v)) {
			runs++
		}
		if !null {
			last = v
		}
	})
	return 8*runs <= values
}

// sameValues reports whether values a and b of the column are equal
// (the same bits).
func (c *colBuf) sameValues(a, b int) bool {
	switch c.kind {
	case dataset.Float64:
		return math.Float64bits(c.f64[a]) == math.Float64bits(c.f64[b])
	case dataset.Int64:
		return c.i64[a] == c.i64[b]
	case dataset.Utf8:
		return c.str[a] == c.str[b]
	}
	return c.bools[a] == c.bools[b]
}

// runLevels appends the definition levels of rows [lo, hi) of a byRun
// column, as levels does for a column of rows.
func (c *colBuf) runLevels(b []byte, lo, hi int) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	n, last := 0, false
	flush := func() {
		if n > 0 {
			v := uint64(1)
			if last {
				v = 0
			}
			b = rleRun(b, n, v, 1)
		}
	}
	c.runSpan(lo, hi, func(m int, null bool, _ int) {
		if n > 0 && null != last {
			flush()
			n = 0
		}
		n, last = n+m, null
	})
	flush()
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// runDict builds the dictionary of rows [lo, hi) of a byRun column in dc
// and returns the data page's values, as dict does for a column of rows.
func (c *colBuf) runDict(dc *colBuf, idx []byte, lo, hi int) []byte {
	*dc = colBuf{kind: c.kind}
	var runs []dictRun
	ids := map[any]int32{} // a value (its bits for a float) → its entry in dc
	c.runSpan(lo, hi, func(n int, null bool, v int) {
		if null {
			return
		}
		var key any
		switch c.kind {
		case dataset.Float64:
			key = math.Float64bits(c.f64[v])
		case dataset.Int64:
			key = c.i64[v]
		default:
			key = c.str[v]
		}
		id, ok := ids[key]
		if !ok {
			id = int32(dc.rows)
			ids[key] = id
			dc.appendN(c.valueAt(v, false), 1)
		}
		if k := len(runs) - 1; k >= 0 && runs[k].id == id {
			runs[k].n += n
			return
		}
		runs = append(runs, dictRun{id, n})
	})
	return dictIndices(idx, runs, dc.rows)
}
