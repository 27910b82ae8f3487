package main

import (
	"fmt"
	"io"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/dataset/store"
)

// The commit protocol of many writers into one dataset, the writers'
// locks, the intents and the checker are the dataset's store
// (dataset/store); what stays here is how the command speaks of them.

// store is shard s as the dataset's store names it.
func (s shardSpec) store() store.Shard { return store.Shard{I: s.i, N: s.n} }

// notes prints a store's notes to w as the command's own lines.
func notes(w io.Writer, prefix string) func(string) {
	return func(msg string) { fmt.Fprintf(w, "%s: %s\n", prefix, msg) }
}

// folder is the dataset in dir as analysis reads it: the program reads its
// datasets as Parquet, and analysis and reports know only dataset.Format.
func folder(dir string) dataset.Folder {
	return dataset.Folder{FS: store.FS(dir), Format: parquetio.Format{}}
}

// commitHook, when set by a test, runs before each commit.
var commitHook func(*store.Writer)

// partBuffer collects an output file's bytes before writeAtomic writes it.
type partBuffer struct{ b []byte }

func (p *partBuffer) Write(b []byte) (int, error) { p.b = append(p.b, b...); return len(b), nil }

// writeAtomic writes data to dir/name atomically (store.WriteFile).
func writeAtomic(dir, name string, data *partBuffer) error {
	return store.WriteFile(dir, name, data.b)
}
