// Package table is the table model that herdsweep's report and commands
// render: a title, columns with their alignment, rows of cells and notes.
// The report writes a Table as markdown (Markdown); a command writes the
// same Table as aligned text for a terminal (Text). Where a command also
// prints JSON, it marshals the typed values the table was built from
// (their fields are the JSON's documented keys), never the table's text.
//
// A cell is inline markdown, as the report writes it: Markdown escapes its
// '|' so that it stays one cell; Text drops its '**' emphasis. Package
// table imports nothing of herdsweep: analysis decides, reports and the
// commands fill a Table, and this package only lays it out.
package table

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Align is how a column's cells line up.
type Align uint8

const (
	Left  Align = iota // markdown ---, text padded on the right
	Right              // markdown --:, text padded on the left
)

// Column is a column's heading and alignment.
type Column struct {
	Name  string
	Align Align
	// Tight writes an empty cell of the column as "| |" in markdown, as
	// for a value not measured, instead of "|  |", a space either side of
	// nothing. The report's tables keep the spacing they had before the
	// model (their bytes do not move).
	Tight bool
}

// Table is a titled grid of cells. Every row has one cell per column.
type Table struct {
	// Title heads the table: a "### " heading in markdown, a line of its
	// own in text; none when empty.
	Title   string
	Columns []Column
	Rows    [][]string
	// Notes follow the table, a paragraph each in markdown, a line each
	// in text.
	Notes []string
}

// New returns a table with the given title and columns and no rows.
func New(title string, cols ...Column) *Table {
	return &Table{Title: title, Columns: cols}
}

// L and R are a left- and a right-aligned column; Tight marks one whose
// empty cells are written "| |".
func L(name string) Column { return Column{Name: name, Align: Left} }
func R(name string) Column { return Column{Name: name, Align: Right} }

// Tighten is c with Tight set.
func (c Column) Tighten() Column { c.Tight = true; return c }

// Add appends a row; it panics when the row has not one cell per column
// (a programmer's error).
func (t *Table) Add(cells ...string) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("table: %q: a row of %d cells in a table of %d columns", t.Title, len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// Markdown writes t as a markdown table: its title as a "### " heading
// and a blank line, the heading row, the alignment row and a line per
// row, then each note after a blank line. Nothing follows the last line:
// the caller decides what separates the table from what comes next.
func (t *Table) Markdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "### %s\n\n", t.Title)
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	t.mdRow(&b, names)
	b.WriteString("|")
	for _, c := range t.Columns {
		if c.Align == Right {
			b.WriteString("--:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		t.mdRow(&b, r)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Table) mdRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for i, c := range cells {
		if c == "" && t.Columns[i].Tight {
			b.WriteString(" |")
			continue
		}
		b.WriteString(" " + Escape(c) + " |")
	}
	b.WriteString("\n")
}

// Escape makes s one markdown table cell: its '|' escaped.
func Escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TextStyle is how Text lays a table out.
type TextStyle struct {
	Indent   string // written before every line of the grid
	NoHeader bool   // the rows only, without the heading row
	// PadLast pads the last column to its width as well (trailing
	// spaces when it is left-aligned); else it is written as it is.
	PadLast bool
	// LeftOnly aligns every column to the left, whatever its Align (the
	// article's text, laid out so before the model).
	LeftOnly bool
}

// Gap is the space between two columns of text.
const Gap = 2

// Text writes t as aligned columns of plain text, Gap spaces apart, each
// cell without its '**': the title and a blank line, the heading row
// unless st.NoHeader, the rows, then each note on a line of its own.
// Widths count runes, as text/tabwriter does. Each column is as wide as
// its widest cell plus Gap, padded on the right of a left-aligned cell and
// on the left of a right-aligned one (so that a table of one alignment is
// laid out as tabwriter lays it out with padding Gap, flag AlignRight for
// right); a left-aligned column after a right-aligned one starts Gap
// spaces further on.
func (t *Table) Text(w io.Writer, st TextStyle) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "%s\n\n", t.Title)
	}
	var lines [][]string
	if !st.NoHeader {
		names := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			names[i] = strings.ReplaceAll(c.Name, "**", "")
		}
		lines = append(lines, names)
	}
	for _, r := range t.Rows {
		plain := make([]string, len(r))
		for i, c := range r {
			plain[i] = strings.ReplaceAll(c, "**", "")
		}
		lines = append(lines, plain)
	}
	width := make([]int, len(t.Columns))
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		b.WriteString(st.Indent)
		for i, c := range l {
			last := i == len(l)-1
			if last && !st.PadLast {
				if i > 0 && t.align(i, st) == Left && t.align(i-1, st) == Right {
					b.WriteString(strings.Repeat(" ", Gap))
				}
				b.WriteString(c)
				break
			}
			pad := strings.Repeat(" ", width[i]+Gap-utf8.RuneCountInString(c))
			switch {
			case t.align(i, st) == Right:
				b.WriteString(pad + c)
			case i > 0 && t.align(i-1, st) == Right: // the gap of a right-aligned column is on its left
				b.WriteString(strings.Repeat(" ", Gap) + c + pad)
			default:
				b.WriteString(c + pad)
			}
		}
		b.WriteString("\n")
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// align is column i's alignment in text.
func (t *Table) align(i int, st TextStyle) Align {
	if st.LeftOnly {
		return Left
	}
	return t.Columns[i].Align
}
