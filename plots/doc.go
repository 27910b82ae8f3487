// Package plots draws herdsweep's figures as PNG or SVG with gonum/plot.
//
// It stands near the end of the pipeline (config → grid of cells →
// simulator runs → Parquet → aggregates → plots / markdown): it takes what
// package analysis hands it and builds each figure's data first (a Figure:
// panels of series with intervals, reference lines, a heat map's grid, its
// title and caption naming the scenario), then renders that to an
// io.Writer, with the legend or colour bar outside the data and small
// multiples sharing their axes. Figure.Degenerate says when a figure would
// show nothing worth showing, so that a report draws only what its data
// holds. Tests check the data; the images only have to decode, have the
// right size and not be blank.
package plots
