package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// shardSpec is shard i of n (0 ≤ i < n); n = 0 or 1 means the whole sweep.
type shardSpec struct{ i, n int }

func (s shardSpec) String() string {
	if s.n <= 1 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.i, s.n)
}

// maxShards bounds n, a guard against typos such as 1/10000000.
const maxShards = 100_000

// parseShard reads "i/n" with 0 ≤ i < n.
func parseShard(s string) (shardSpec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > maxShards || i < 0 || i >= n {
		return shardSpec{}, fmt.Errorf("shard %q: want i/n with 0 ≤ i < n ≤ %d, e.g. 0/4", s, maxShards)
	}
	return shardSpec{i, n}, nil
}

// resolveShard decides which shard this process runs: --shard, else a
// Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with the count from --shards
// or HERDSWEEP_SHARDS), else a Slurm job array (SLURM_ARRAY_TASK_ID minus
// SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT), else the whole sweep.
func resolveShard(flag string, shards int, getenv func(string) string) (shardSpec, string, error) {
	if shards < 0 || shards > maxShards {
		return shardSpec{}, "", fmt.Errorf("--shards %d: want the number of shards, 1 to %d (0: from HERDSWEEP_SHARDS)", shards, maxShards)
	}
	if flag != "" {
		s, err := parseShard(flag)
		if err == nil && shards > 0 && shards != s.n {
			return shardSpec{}, "", fmt.Errorf("--shard %s with --shards %d: the shard counts differ; give one of them", flag, shards)
		}
		return s, "--shard", err
	}
	count := func(what string) (int, error) {
		if shards > 0 {
			return shards, nil
		}
		if v := getenv("HERDSWEEP_SHARDS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("HERDSWEEP_SHARDS=%q: want a whole number ≥ 1", v)
			}
			return n, nil
		}
		return 0, fmt.Errorf("%s is set but not the number of shards: give --shards N or HERDSWEEP_SHARDS (the Job's completions)", what)
	}
	if v := getenv("JOB_COMPLETION_INDEX"); v != "" {
		n, err := count("JOB_COMPLETION_INDEX")
		if err != nil {
			return shardSpec{}, "", err
		}
		s, err := parseShard(v + "/" + strconv.Itoa(n))
		return s, "JOB_COMPLETION_INDEX", err
	}
	if v := getenv("SLURM_ARRAY_TASK_ID"); v != "" {
		id, err := strconv.Atoi(v)
		if err != nil {
			return shardSpec{}, "", fmt.Errorf("SLURM_ARRAY_TASK_ID=%q: want a whole number", v)
		}
		if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
			min, err := strconv.Atoi(m)
			if err != nil {
				return shardSpec{}, "", fmt.Errorf("SLURM_ARRAY_TASK_MIN=%q: want a whole number", m)
			}
			id -= min
		}
		n := shards
		if n == 0 {
			c := getenv("SLURM_ARRAY_TASK_COUNT")
			if n, err = strconv.Atoi(c); err != nil {
				return shardSpec{}, "", fmt.Errorf("SLURM_ARRAY_TASK_COUNT=%q: want a whole number", c)
			}
		}
		s, err := parseShard(strconv.Itoa(id) + "/" + strconv.Itoa(n))
		return s, "SLURM_ARRAY_TASK_ID", err
	}
	if shards > 1 {
		return shardSpec{}, "", fmt.Errorf("--shards %d without --shard, JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID: which shard is this?", shards)
	}
	if v := getenv("HERDSWEEP_SHARDS"); v != "" && strings.TrimSpace(v) != "1" {
		// a job meant to be sharded that would run the whole sweep in each
		// of its pods
		return shardSpec{}, "", fmt.Errorf("HERDSWEEP_SHARDS=%q without --shard, JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID: which shard is this? (unset it to run the whole sweep)", v)
	}
	return shardSpec{}, "", nil
}

var getenv = os.Getenv
