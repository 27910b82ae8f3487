// Package store writes herdsweep's datasets onto a file system shared by
// many writers, and checks them: the commit protocol (unique part names,
// side parts before the runs part that commits them, atomic renames),
// the writers' locks, the intents a run records, the cleaning of what a
// writer that is gone left, and the checker behind `sweep check`.
//
// It stands between the simulator runs and the analysis in the pipeline
// (config → grid of cells → simulator runs → Parquet → aggregates → plots
// / markdown): dataset owns the tables and the folder layout, parquetio
// encodes the parts, and store puts them into the folders and says what a
// folder holds. It returns values and errors: what a writer does beside
// writing (leftovers it removes, a lock it waits for) goes to a callback
// the caller passes, and which exit code a problem is stays the caller's.
//
// What it relies on: rename within a folder is atomic and replaces nothing
// (names are unique); a file created with O_EXCL, or a hard link, exists
// once; a file's modification time is set by the file server's clock. NFS
// v3/v4 and Kubernetes PVCs (block volumes, NFS, CephFS) provide all
// three. Object storage (S3, or a store speaking its API; package
// objstore) renames nothing: there a part is committed by its create-only
// PUT (If-None-Match: *), an intent is created once the same way, a lock
// is created so and renewed or taken over only by a compare-and-swap
// (If-Match on its ETag), and LastModified is the store's clock; a store
// that does not honour both conditions is refused (volume.go). FUSE mounts
// of a bucket rename by copying: they are not supported.
//
//   - A part's name is unique to its writer: part-TAG-SEQ-HOST-PID-RAND.parquet,
//     TAG "all" or the shard "IofN", RAND 8 random hex digits drawn per writer,
//     the id its lock holds (lock.go).
//   - A writer records what the sweep is meant to hold, once, before it
//     runs anything: an intent (dataset.Intent), written create-only.
//   - A part is written to .NAME.….tmp, synced and renamed; it is sealed
//     with its checksum (parquetio.Verify). Its side-table parts (timelines,
//     groups) are renamed into place before the runs part of the same name,
//     which is the commit: readers ignore a side part whose runs part is not
//     there. The runs part records how many side rows it commits
//     (dataset.Meta.TimelineRows, GroupRows).
//   - A writer removes only files whose names are ours (leftover.go) and
//     whose writer is gone: a temporary file, or a side part never
//     committed. Nothing else, whatever its name or age.
//   - The first error is the one reported; a part that failed is not
//     committed again, and the side parts it placed are removed.
package store
