package main

import "runtime"

func defaultWorkers() int { return runtime.GOMAXPROCS(0) }
