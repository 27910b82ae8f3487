package reports

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/reports/table"
)

// Verdict says how one of our figures stands against the published one.
// A row without jitter is judged by its digits on the article's seeds
// ("exact"), and by z where they differ. A jittered row's figures on five
// seeds are one draw (analysis.ArticleRow.Jittered): it is judged by z
// alone, whether or not the digits match, and is never called exact.
func Verdict(r analysis.ArticleRow, m article.Metric) string {
	pub, ours := r.Published[m], r.Ours[m]
	if pub.NotFinished || ours.NotFinished {
		switch {
		case pub.NotFinished != ours.NotFinished:
			return "differs"
		case r.Jittered:
			return "not finished, as published"
		}
		return "exact"
	}
	if ours.Value == pub.Value && !r.Jittered {
		return "exact"
	}
	sp, ok := r.Many[m]
	if !ok || math.IsNaN(sp.Z) {
		if ours.Value == pub.Value {
			return "not judged" // its digits match on one draw of five seeds, and there is no z
		}
		return fmt.Sprintf("off by %s", signed(ours.Value-pub.Value, precision(m)))
	}
	if math.Abs(sp.Z) <= 2 {
		return "within sampling error"
	}
	return fmt.Sprintf("off by %.1f sd", math.Abs(sp.Z))
}

// precision is the decimals the article prints a metric with.
func precision(m article.Metric) int {
	if m == article.Sent || m == article.Peak {
		return 0
	}
	return 1
}

// WriteArticle writes the article's tables beside ours, row by row: the
// published figure, ours on the article's seeds, the difference, ours over
// many seeds (mean ± the standard deviation of a 5-seed mean), how many of
// those the published figure lies away, and a verdict.
func WriteArticle(w io.Writer, tables []analysis.ArticleTable) error {
	for _, t := range articleGrids(tables) {
		if err := t.Markdown(w); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return nil
}

// articleGrids are the article's tables beside ours, as WriteArticle
// and WriteArticleText lay them out.
func articleGrids(tables []analysis.ArticleTable) []*table.Table {
	many := 0
	for _, t := range tables {
		for _, r := range t.Compared {
			for _, sp := range r.Many {
				many = max(many, sp.Seeds)
			}
		}
	}
	var out []*table.Table
	for _, t := range tables {
		cols := []table.Column{table.L("row"), table.L("metric"), table.R("published"), table.R("ours (seeds 206–210)"), table.R("Δ")}
		if many > 0 {
			cols = append(cols, table.R(thousands(float64(many))+" seeds: mean ± sd of a 5-seed mean"), table.R("z"))
		}
		tb := table.New(t.ID+" — "+t.Title, append(cols, table.L("verdict"))...)
		for _, r := range t.Compared {
			label := r.Label
			if r.Exact {
				label += " **(exact)**"
			}
			for i, m := range t.Metrics {
				if i > 0 {
					label = ""
				}
				tb.Add(articleCells(r, m, label, many > 0)...)
			}
		}
		out = append(out, tb)
	}
	return out
}

// articleCells is a row of an article table: metric m of row r.
func articleCells(r analysis.ArticleRow, m article.Metric, label string, many bool) []string {
	pub, ours := r.Published[m], r.Ours[m]
	ps, os, delta := "not finished", "not finished", "—"
	if !pub.NotFinished {
		ps = figure(m, pub.Value)
	}
	if !ours.NotFinished {
		os = figure(m, ours.Value)
	}
	if !pub.NotFinished && !ours.NotFinished {
		delta = signed(ours.Value-pub.Value, precision(m))
	}
	if !many {
		return []string{label, string(m), ps, os, delta, Verdict(r, m)}
	}
	sp := r.Many[m]
	ms, z := "—", "—"
	if sp.Seeds > 0 && sp.Unfinished < sp.Seeds {
		ms = fmt.Sprintf("%s ± %s", figure(m, sp.Mean), figure(m, sp.SD5))
		if m != article.Sent && m != article.Peak {
			ms = fmt.Sprintf("%.1f ± %.2f", sp.Mean, sp.SD5)
		}
	}
	if sp.Unfinished > 0 {
		ms += fmt.Sprintf(" (%s of %s not finished)", thousands(float64(sp.Unfinished)), thousands(float64(sp.Seeds)))
	}
	if !math.IsNaN(sp.Z) {
		z = signed(sp.Z, 1)
	}
	return []string{label, string(m), ps, os, delta, ms, z, Verdict(r, m)}
}

// errWriter keeps the first write error, so that formatting code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// WriteArticleText writes the same comparison as WriteArticle as aligned
// plain text, for a terminal.
func WriteArticleText(w io.Writer, tables []analysis.ArticleTable) error {
	for _, t := range articleGrids(tables) {
		if err := t.Text(w, table.TextStyle{PadLast: true, LeftOnly: true}); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// table writes t as markdown.
func (e *errWriter) table(t *table.Table) {
	if e.err == nil {
		e.err = t.Markdown(e.w)
	}
}

// Write lets an errWriter back a tabwriter; the first error sticks.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// The seeds' search, measured with `go run ./scripts/windows -to
// 1000000` (output in scripts/windows/output-1000000.txt): of the windows
// of five consecutive seeds starting at 1 … windowsTo−4, windowsFixed5
// reproduce the fixed-5 s row to every printed digit, seeds 206–210 first;
// every one of them also reproduces the exponential cap-60 s row and the
// honour-Retry-After-exactly row, and windowsCap300 of them the
// exponential cap-300 s row.
const (
	windowsTo     = 1_000_000
	windowsFixed5 = 152
	windowsCap300 = 149
)

// ReproductionNote says what the exact rows are worth: one fit of five
// seeds, not several independent confirmations.
func ReproductionNote() string {
	return fmt.Sprintf("The article does not publish its seeds; seeds 206–210 were found by search. They are the first of %s windows of five consecutive seeds (among those starting at 1 … %s) that reproduce the fixed-5 s row to every printed digit, and every one of those windows also reproduces the exponential cap-60 s row and the honour-Retry-After-exactly row (%s of them the exponential cap-300 s row too). So the exact rows are one fit of five seeds, not independent confirmations of the simulator; that evidence is the many-seed comparison of `sweep reproduce`, which says for each published figure how far it lies from our mean over 1,000 seeds (z, in standard deviations of a 5-seed mean). Measured with `go run ./scripts/windows -to %d`.",
		thousands(windowsFixed5), thousands(windowsTo-4), thousands(windowsCap300), windowsTo)
}

// writeArticleSummary says in a few lines how the article's tables come
// out, each distinct row once; the tables themselves are in article.md.
func writeArticleSummary(ew *errWriter, tables []analysis.ArticleTable) {
	type row struct {
		name     string
		tables   []string
		worst    string
		jittered bool
	}
	var rows []*row
	byCell := map[string]*row{}
	many := false
	for _, t := range tables {
		for _, r := range t.Compared {
			k := r.Cell.Key()
			rw := byCell[k]
			if rw == nil {
				rw = &row{name: r.Label, worst: "exact", jittered: r.Jittered}
				byCell[k] = rw
				rows = append(rows, rw)
			}
			rw.tables = append(rw.tables, strings.TrimPrefix(t.ID, "table"))
			for _, m := range t.Metrics {
				if len(r.Many) > 0 {
					many = true
				}
				switch v := Verdict(r, m); {
				case v == "exact":
				case v == "within sampling error":
					if rw.worst == "exact" {
						rw.worst = v
					}
				default:
					rw.worst = "off"
				}
			}
		}
	}
	var exact, within, off, draws []string
	for _, rw := range rows {
		name := fmt.Sprintf("%s (table %s)", rw.name, strings.Join(rw.tables, ", "))
		switch {
		case !many && rw.jittered:
			draws = append(draws, name)
		case rw.worst == "exact":
			exact = append(exact, name)
		case rw.worst == "within sampling error":
			within = append(within, name)
		default:
			off = append(off, name)
		}
	}
	ew.printf("## The article's tables beside ours\n\n")
	ew.printf("The article's tables 1–4 on its scenario with seeds 206–210, aggregated as the article does; [article.md](article.md) has every row, figure by figure.\n\n")
	ew.printf("- exact to every printed digit: %s\n", orNone(exact))
	if many {
		ew.printf("- within sampling error (|z| ≤ 2 against this dataset's many-seed mean), not to the digit or jittered (a jittered row is judged by z even where its digits match: five seeds are one draw): %s\n", orNone(within))
		ew.printf("- neither: %s\n\n", orNone(off))
	} else {
		if len(off) > 0 {
			ew.printf("- not to the digit: %s\n", strings.Join(off, "; "))
		}
		ew.printf("- jittered, so never called exact (five seeds are one draw, whatever their digits): %s. This dataset has only the article's seeds for them; `sweep reproduce` sets each against 1,000 seeds\n\n", orNone(draws))
	}
	ew.printf("%s\n\n", ReproductionNote())
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, "; ")
}

func (r *Report) writeArticlePage(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("# The article's tables beside ours\n\n[← report](report.md)\n\n")
	ew.printf("Published figures against this dataset's runs on the article's scenario with seeds 206–210, aggregated as the article does (mean of per-seed values; sent and peak rounded, times from the start of the outage to 0.1 s, as the article printed them). `sweep reproduce` adds the spread over 1,000 seeds.\n\n%s\n\n", ReproductionNote())
	if ew.err != nil {
		return ew.err
	}
	return WriteArticle(w, r.Article)
}
