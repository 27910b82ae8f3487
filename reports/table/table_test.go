package table

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"
)

// randomTable is a table of random cells (some empty, some wide runes,
// some with '|' and '**'), every column aligned as align says.
func randomTable(r *rand.Rand, align Align) *Table {
	words := []string{"", "a", "bb", "−12.5", "t99 (s)", "→ 3", "x|y", "**bold**", "not finished", "1,174", "≈"}
	t := &Table{}
	for range 1 + r.IntN(6) {
		t.Columns = append(t.Columns, Column{Name: words[r.IntN(len(words))], Align: align, Tight: r.IntN(2) == 0})
	}
	for range r.IntN(8) {
		row := make([]string, len(t.Columns))
		for i := range row {
			row[i] = words[r.IntN(len(words))]
		}
		t.Add(row...)
	}
	return t
}

// Text lays a table out as text/tabwriter does with padding Gap: left
// aligned (flags 0) or right aligned (AlignRight), the last column
// unterminated or, with PadLast, terminated by a tab.
func TestTextIsTabwriters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		align := Align(r.IntN(2))
		tb := randomTable(r, align)
		st := TextStyle{PadLast: r.IntN(2) == 0, NoHeader: r.IntN(3) == 0, Indent: []string{"", "  "}[r.IntN(2)]}
		var want strings.Builder
		flags := uint(0)
		if align == Right {
			flags = tabwriter.AlignRight
		}
		tw := tabwriter.NewWriter(&want, 0, 0, Gap, ' ', flags)
		lines := tb.Rows
		if !st.NoHeader {
			var names []string
			for _, c := range tb.Columns {
				names = append(names, c.Name)
			}
			lines = append([][]string{names}, lines...)
		}
		for _, l := range lines {
			cells := make([]string, len(l))
			for j, c := range l {
				cells[j] = strings.ReplaceAll(c, "**", "")
			}
			end := "\n"
			if st.PadLast {
				end = "\t\n"
			}
			fmt.Fprint(tw, st.Indent+strings.Join(cells, "\t")+end)
		}
		tw.Flush()
		var got strings.Builder
		if err := tb.Text(&got, st); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Fatalf("table %d (%+v, %+v): -tabwriter +Text:\n%s", i, tb, st, diff)
		}
	}
}

// Markdown: one line per row with as many cells as columns, whatever the
// cells hold ('|' escaped), the alignment row saying each column's
// alignment, and an empty cell written "| |" in a tight column only.
func TestMarkdownKeepsTheGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		tb := randomTable(r, Align(r.IntN(2)))
		tb.Columns[0].Align = Align(r.IntN(2))
		var b strings.Builder
		if err := tb.Markdown(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 2+len(tb.Rows) {
			t.Fatalf("table %d: %d lines for %d rows:\n%s", i, len(lines), len(tb.Rows), b.String())
		}
		for k, l := range lines {
			cells := strings.Split(strings.ReplaceAll(l, `\|`, "¦"), "|")
			if len(cells) != len(tb.Columns)+2 || cells[0] != "" || cells[len(cells)-1] != "" {
				t.Fatalf("table %d line %d: %q is not %d cells", i, k, l, len(tb.Columns))
			}
			for j, c := range cells[1 : len(cells)-1] {
				col := tb.Columns[j]
				var want string
				switch {
				case k == 1 && col.Align == Right:
					want = "--:"
				case k == 1:
					want = "---"
				default:
					text := col.Name
					if k > 1 {
						text = tb.Rows[k-2][j]
					}
					want = " " + strings.ReplaceAll(text, "|", "¦") + " "
					if text == "" && col.Tight {
						want = " "
					}
				}
				if c != want {
					t.Fatalf("table %d line %d cell %d: %q, want %q", i, k, j, c, want)
				}
			}
		}
	}
}

func ExampleTable_Markdown() {
	t := New("Library defaults", L("library"), R("t99 (s)"), L("300 req/s").Tighten())
	t.Add("grpc", "45.2", "**fine**")
	t.Add("a|b", "not finished", "")
	t.Markdown(os.Stdout)
	// Output:
	// ### Library defaults
	//
	// | library | t99 (s) | 300 req/s |
	// |---|--:|---|
	// | grpc | 45.2 | **fine** |
	// | a\|b | not finished | |
}

func ExampleTable_Text() {
	t := New("", L("library"), R("t99 (s)"), L("verdict"))
	t.Add("grpc", "45.2", "**fine**")
	t.Add("polly-v8", "not finished", "over budget")
	t.Text(os.Stdout, TextStyle{})
	// Output:
	// library          t99 (s)  verdict
	// grpc                45.2  fine
	// polly-v8    not finished  over budget
}
