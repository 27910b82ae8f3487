// Package plots draws herdsweep's figures as PNG with gonum/plot.
//
// It stands near the end of the pipeline (config → grid of cells →
// simulator runs → Parquet → aggregates → plots / markdown): it takes what
// package analysis hands it and builds each figure's data first (a Figure:
// titled, labelled series with intervals), then renders that to an
// io.Writer. Tests check the data; the PNG only has to decode, have the
// right size and not be blank.
package plots
