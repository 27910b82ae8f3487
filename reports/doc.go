// Package reports writes herdsweep's markdown: the report of a dataset
// (provenance, the article's tables beside ours, the recommendation for each
// capacity, the plots with a caption each, and every warning) and the
// row-by-row comparison `sweep reproduce` prints.
//
// It stands last in the pipeline (config → grid of cells → simulator runs →
// Parquet → aggregates → plots / markdown) and only formats what package
// analysis hands it, to an io.Writer. The same inputs give the same bytes.
package reports
