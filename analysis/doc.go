// Package analysis reads a herdsweep dataset and says what it means: it
// groups runs by every parameter but the seed and summarises each metric
// (mean, standard deviation, a Student-t 95 % confidence interval of the
// mean, min, max, runs that did not finish); it recommends a policy for a
// capacity, with its Pareto front; and it sets the article's published
// tables beside what the simulator gives.
//
// It stands after the Parquet dataset in the pipeline (config → grid of
// cells → simulator runs → Parquet → aggregates → plots / markdown) and
// never runs the simulator itself: cmd/sweep decides when a recommendation
// needs fresh runs. Warnings that do not stop the work — too few seeds,
// unfinished runs, a winner that changes between seeds — are data, carried
// to the report beside the numbers they qualify.
//
// It reads datasets only through dataset.Format (typed column batches and
// records), never a file-format library: the program sets the Parquet
// implementation (dataset/parquetio).
package analysis
