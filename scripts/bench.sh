#!/usr/bin/env bash
# herdsweep's benchmarks, in one place. Prints the figures the README quotes.
#
#   scripts/bench.sh            everything (about 5 minutes on 2 cores)
#   COUNT=10 scripts/bench.sh   more samples per Go benchmark (for benchstat)
#   ROUNDS=9 …                  more interleaved rounds of table 1 against herd.mjs
#   SKIP_MILLION=1 …            without the 1,000,000-run sweep
#   ONLY=table1 …               one section: sim, table1, pipeline, million or virtual
#   PIPE_ROUNDS=5 PIPE_SHARD= … the pipeline's rounds (3) and shard of the
#                               default sweep (0/8; empty for all of it)
#
# Output goes to out/bench/. Needs Go; node (for the article's JavaScript
# simulator) and GNU time (/usr/bin/time, for memory) when present.
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/bench
mkdir -p "$out"
count=${COUNT:-5}
only=${ONLY:-}
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
go build -o "$out/sweep" ./cmd/sweep

if want sim; then
echo "== simulator (go test -bench, $count samples)"
go test ./sim -run '^$' -bench 'Table1|Families|MillionClients|Queue' -count "$count" -benchtime 1s | tee "$out/sim.txt"
if go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out/sim.txt" > "$out/sim.benchstat" 2>/dev/null; then
  cat "$out/sim.benchstat"
fi
# The queueing server with timeouts and open-loop traffic against the
# counting server's full jitter, ns per event: medians of the samples.
nsev() { awk -v b="$1" '$1 ~ b { for (i = 2; i < NF; i++) if ($(i + 1) == "ns/event") print $i }' "$out/sim.txt" | median; }
q=$(nsev '^BenchmarkQueue/open-loop-'); c=$(nsev '^BenchmarkTable1/full-jitter-')
awk -v q="$q" -v c="$c" 'BEGIN { printf "queueing server, open loop: %.1f ns/event; counting server, full jitter: %.1f; ratio %.2f\n", q, c, q / c }' | tee "$out/queue-ratio.txt"
fi

if want table1; then
echo
echo "== table 1: Go against the article's herd.mjs on this machine, interleaved"
# ROUNDS rounds, each node's five rows then Go's five (a test binary built
# once, 200 runs a row); the figures are each row's median over the rounds.
if command -v node >/dev/null; then
  rounds=${ROUNDS:-5}
  go test -c -o "$out/sim.test" ./sim
  : > "$out/node.txt"; : > "$out/go-table1.txt"
  for r in $(seq "$rounds"); do
    node scripts/reference/herd.mjs bench 20 >> "$out/node.txt"          # name ms ms/run
    "$out/sim.test" -test.run '^$' -test.bench '^BenchmarkTable1$' -test.count 1 -test.benchtime 200x |
      awk '/^BenchmarkTable1\// { split($1, a, "/"); n = a[2]; sub(/-[0-9]+$/, "", n); print n, $3 / 1e6 }' >> "$out/go-table1.txt"
  done
  printf "%-14s %10s %10s %8s   (medians of %d rounds)\n" row "node ms" "go ms" speed-up "$rounds" | tee "$out/speedup.txt"
  tj=0; tg=0
  for row in fixed-5s exponential full-jitter equal-jitter decorrelated; do
    j=$(awk -v r="$row" '$1 == r { print $2 }' "$out/node.txt" | median)
    g=$(awk -v r="$row" '$1 == r { print $2 }' "$out/go-table1.txt" | median)
    awk -v r="$row" -v j="$j" -v g="$g" 'BEGIN { printf "%-14s %10.3f %10.3f %7.1fx\n", r, j, g, j / g }' | tee -a "$out/speedup.txt"
    tj=$(awk -v a="$tj" -v b="$j" 'BEGIN { print a + b }'); tg=$(awk -v a="$tg" -v b="$g" 'BEGIN { print a + b }')
  done
  awk -v j="$tj" -v g="$tg" 'BEGIN { printf "%-14s %10.3f %10.3f %7.1fx\n", "table 1", j, g, j / g }' | tee -a "$out/speedup.txt"
else
  echo "node not found: skipped"
fi
fi

if want pipeline; then
echo
# Parallel efficiency: the default sweep (PIPE_SHARD=0/8 of it; PIPE_SHARD=
# for all of it) at 1 and 2 workers, alternately, PIPE_ROUNDS rounds (3),
# each into a fresh folder; CPU (user + sys) and wall time from GNU time.
# Efficiency is wall(1) / (2 × wall(2)) of the medians: meaningful only on
# two otherwise idle cores; the CPU figures say what a second worker costs,
# and cores in use how much of a second core one worker already takes (the
# committer's encoding, the garbage collector) and how much two got.
shard=${PIPE_SHARD-0/8}; rounds=${PIPE_ROUNDS:-3}
sharg=(); [ -n "$shard" ] && sharg=(--shard "$shard")
echo "== pipeline: the default sweep${shard:+, shard $shard,} at 1 and 2 workers, interleaved, $rounds rounds (no report)"
: > "$out/pipeline.txt"
for r in $(seq "$rounds"); do
  for w in 1 2; do
    rm -rf "$out/w$w"
    /usr/bin/time -f "%e %U %S %M" -o "$out/time-w$w.txt" \
      "$out/sweep" run --sweep default "${sharg[@]}" --out "$out/w$w" --workers "$w" --no-report --quiet > "$out/run-w$w.txt" 2>/dev/null
    read -r e u s m < "$out/time-w$w.txt"
    echo "$w $e $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m" >> "$out/pipeline.txt"
    awk -v r="$r" -v w="$w" -v e="$e" -v u="$u" -v s="$s" -v m="$m" 'BEGIN {
      printf "round %d, %d worker%s: %.2f s wall, %.2f s CPU (%.2f user + %.2f sys), %d MiB\n", r, w, (w > 1 ? "s" : ""), e, u + s, u, s, m / 1024 }'
  done
done
col() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$out/pipeline.txt" | median; }
runs=$(awk '/^default:/ {print $2}' "$out/run-w1.txt")
awk -v r="$runs" -v a="$(col 1 2)" -v b="$(col 2 2)" -v ca="$(col 1 3)" -v cb="$(col 2 3)" 'BEGIN {
  printf "medians: %.2f s wall at 1 worker, %.2f at 2: parallel efficiency %.0f%%; CPU %.2f s at 1, %.2f at 2 (%+.0f%%); cores in use (CPU / wall) %.2f at 1, %.2f at 2; %.0f runs/s at 2 workers\n", a, b, 100 * a / (2 * b), ca, cb, 100 * (cb - ca) / ca, ca / a, cb / b, r / b }' | tee "$out/efficiency.txt"
"$out/sweep" diff "$out/w1" "$out/w2" | tail -1
# Why two workers fall short of twice one: the bound the CPU figures set,
# and how much of the extra CPU is the machine's. Two workers can at best
# keep both cores busy, so wall(2) ≥ CPU(2) / 2 and the efficiency is at
# most wall(1) / CPU(2) = 1 / (cores in use at 1 × CPU(2)/CPU(1)). Then
# the machine alone: a fixed amount of pure simulation (6,000 runs of table
# 1's full-jitter row: no file, no lock, next to no allocation), one process
# alone against two at once, alternately: the CPU each takes more beside
# the other is what two busy cores cost each other here, whatever runs.
[ -x "$out/sim.test" ] || go test -c -o "$out/sim.test" ./sim
simcpu() { /usr/bin/time -f "%U %S" -o "$1" "$out/sim.test" -test.run '^$' -test.bench '^BenchmarkTable1$/^full-jitter$' -test.benchtime 6000x -test.count 1 > /dev/null 2>&1; }
: > "$out/contention.txt"
for r in $(seq "$rounds"); do
  simcpu "$out/time-s0.txt"
  simcpu "$out/time-s1.txt" & simcpu "$out/time-s2.txt"; wait
  # alone, and the two at once (CPU each), of this round
  echo "$(awk '{ print $1 + $2 }' "$out/time-s0.txt") $(cat "$out/time-s1.txt" "$out/time-s2.txt" | awk '{ s += $1 + $2 } END { print s / 2 }')" >> "$out/contention.txt"
done
ratios=$(awk '{ printf "%+.0f%% ", 100 * ($2 - $1) / $1 }' "$out/contention.txt")
awk -v a="$(col 1 2)" -v ca="$(col 1 3)" -v cb="$(col 2 3)" -v m="$(awk '{ print $2 / $1 }' "$out/contention.txt" | median)" -v rs="$ratios" 'BEGIN {
  printf "bound from the CPU: at most %.0f%% (cores in use %.2f at 1 worker, CPU %+.0f%% at 2); the machine: a fixed simulation'"'"'s CPU as two at once against alone, round by round: %s(median %+.0f%%)\n",
    100 / ((ca / a) * (cb / ca)), ca / a, 100 * (cb - ca) / ca, rs, 100 * (m - 1) }' | tee -a "$out/efficiency.txt"
fi

if [ -z "${SKIP_MILLION:-}" ] && want million; then
  echo
  echo "== a 1,000,000-run sweep (scripts/bench/million.toml): CPU, memory, and where the CPU goes"
  rm -rf "$out/million"
  HERDSWEEP_CPUPROFILE="$out/million.prof" /usr/bin/time -f "%e %U %S %M" -o "$out/time-million.txt" \
    "$out/sweep" run --config scripts/bench/million.toml --out "$out/million" --yes --no-report --quiet
  read -r e u s m < "$out/time-million.txt"
  awk -v e="$e" -v u="$u" -v s="$s" -v m="$m" 'BEGIN {
    printf "%.2f s of CPU (%.2f user + %.2f sys), %.2f s wall, %d MiB max RSS\n", u + s, u, s, e, m / 1024 }' | tee "$out/million.txt"
  # The profile's split: Parquet is filling parts (store.(*Part).AddOf,
  # which Add calls) and encoding and committing them
  # (store.(*Committer).loop); the check is the end-of-run check of the
  # parts written; the rest is the simulation, listing the runs to do, the
  # worker pool and the garbage collector. A profile without one of those
  # functions stops the script: a renamed one would drop its share silently.
  go tool pprof -top -cum -nodecount=100000 "$out/sweep" "$out/million.prof" 2>/dev/null | awk '
    /Total samples =/ { for (i = 1; i <= NF; i++) if ($i == "=") { t = $(i + 1); sub(/s$/, "", t) } }
    function sec(v) { if (v ~ /ms$/) { sub(/ms$/, "", v); return v / 1000 } sub(/s$/, "", v); return v }
    $6 ~ /store\.\(\*Part\)\.AddOf$/ { fill = sec($4) }
    $6 ~ /store\.\(\*Committer\)\.loop$/ { commit = sec($4) }
    $6 ~ /^main\.checkWritten$/ { ck += sec($4) }
    $6 ~ /grid\.Cell\.Simulate$/ { sm += sec($4) }
    END { if (fill == 0 || commit == 0 || sm == 0) { print "bench.sh: the profile lacks store.(*Part).AddOf, store.(*Committer).loop or grid.Cell.Simulate: rename them here" > "/dev/stderr"; exit 1 }
      pq = fill + commit
      printf "CPU profile, %.2f s of samples: Parquet %.2f s (%.1f %%), end-of-run check %.2f s (%.1f %%), together %.1f %%; simulation %.2f s (%.1f %%)\n",
      t, pq, 100 * pq / t, ck, 100 * ck / t, 100 * (pq + ck) / t, sm, 100 * sm / t }' | tee -a "$out/million.txt"
fi

if want virtual; then
  echo
  echo "== live --virtual: each real library once at the article's scale (2,000 clients, 30 s outage)"
  # ns/request and ns/client-s (the run's time over its clients and the
  # simulated seconds to its last request), with the CPU the runs took.
  go test -c -o "$out/live.test" ./live
  (cd live && /usr/bin/time -f "%U s user, %S s sys, %e s wall" -o "../$out/time-virtual.txt" \
    "../$out/live.test" -test.run '^$' -test.bench VirtualRun -test.benchtime 2x) | tee "$out/virtual.txt"
  cat "$out/time-virtual.txt"
fi
