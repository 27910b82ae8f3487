// Package reports builds and writes herdsweep's markdown.
//
// Build turns a dataset (its runs, the groups of mixed fleets and a way to
// read timelines) into a Report: a value holding the decision for every
// scenario (the recommended policy among those that jitter, what to
// avoid, the verdicts on library defaults), the figures the data can
// show, and the sections the data holds (mixed fleets, servers that do
// more than count, the article's tables). Report.Files lists what it
// renders: report.md (the decision first, everything else linked), a
// page per scenario, article.md and every figure as PNG and SVG, each to
// an io.Writer. It also writes the row-by-row comparison `sweep
// reproduce` prints and the answer of `sweep recommend`.
//
// It stands last in the pipeline (config → grid of cells → simulator runs
// → Parquet → aggregates → plots / markdown) and only formats what package
// analysis decides. The same inputs give the same bytes.
package reports
