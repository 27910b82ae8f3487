// Package dataset owns the tables of herdsweep's datasets, without a
// file-format library: the runs table (one row per run: every parameter,
// the seed, every metric), the timelines table (one row per tick of the
// runs that asked for one), the groups table (one row per policy group of a
// mixed fleet) and the cells table. Each table has one column list
// (RunsTable, TimelineTable, GroupsTable, CellsTable: TableColumn's name,
// type, nulls, doc, and how a writer gets its value from a row and a
// reader puts it back) from which the file format's schema (RunsFields,
// …), its writers and readers and the documentation (RunsColumns, …) are
// built, so that a column is named once.
//
// It stands between the simulator runs and the analysis in the pipeline
// (config → grid of cells → simulator runs → Parquet → aggregates → plots /
// markdown). List reads the folder layout (Hive-style sweep=NAME folders of
// part files) from an fs.FS and says which parts are data. Writing parts
// into that layout, the commit protocol of many writers, and checking a
// dataset are dataset/store's.
//
// Reading goes through Format (typed column batches, records, selective
// reads), which dataset/parquetio implements with Arrow and Parquet: the
// analysis, plots and reports import no file-format library, and a
// program that reads datasets passes the Format in with the folder
// (Folder): no reader is registered process-wide.
//
// Parameter columns are named by grid.Params; units are in the names
// (cap_s, capacity_rps, t99_s). "Not finished" is a null, never a number.
package dataset
