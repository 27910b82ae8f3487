#!/usr/bin/env bash
# CPU time per event of the simulator's benchmarks, two builds interleaved:
# on a shared machine wall-clock benchmarks swing by ±100 % and more, CPU
# time (user + sys of the test binary, GNU time) far less.
#
#   scripts/bench-cpu.sh REV            this tree against git revision REV
#   ROUNDS=9 scripts/bench-cpu.sh REV   more rounds (default 5)
#   ROWS='Table1/decorrelated:1000' …   only these benchmarks (name:runs)
#
# Each round runs every benchmark below once per build (-benchtime Nx), old
# then new; each line prints a build's CPU ns per event over the rounds,
# sorted (min … max): read the minimum and the median. Events per run are
# read from the benchmark's own output. Output in out/bench-cpu/. Each level
# of a name is anchored: ^BenchmarkQueue$/^decorrelated$ (unanchored, the
# first level also matched BenchmarkQueuedChain, which then ran in the same
# process and counted 10 s of CPU against Queue/decorrelated).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/bench-cpu.sh REV}
out=out/bench-cpu
rm -rf "$out/old"; mkdir -p "$out/old"
git archive "$rev" | tar -x -C "$out/old"
(cd "$out/old" && go test -c -o ../old.test ./sim)
go test -c -o "$out/new.test" ./sim
rows=${ROWS:-"Table1/fixed-5s:1000 Table1/exponential:1000 Table1/full-jitter:1000 Table1/equal-jitter:1000 Table1/decorrelated:1000 Queue/fixed-5s:500 Queue/decorrelated:500 Queue/open-loop:40 MillionClients:3"}
: > "$out/cpu.txt"
for r in $(seq "${ROUNDS:-5}"); do
  for b in old new; do
    for row in $rows; do
      name=${row%%:*}; n=${row##*:}
      /usr/bin/time -f "%U %S" -o "$out/time.txt" "$out/$b.test" -test.run '^$' -test.bench "^Benchmark${name//\//\$/^}\$" \
        -test.benchtime "${n}x" > "$out/bench.txt"
      ev=$(awk '{ for (i = 2; i < NF; i++) if ($(i + 1) == "events/run") print $i }' "$out/bench.txt")
      awk -v b="$b" -v name="$name" -v n="$n" -v ev="$ev" '{ printf "%s %s %.1f\n", b, name, ($1 + $2) * 1e9 / (n * ev) }' "$out/time.txt" >> "$out/cpu.txt"
    done
  done
done
for row in $rows; do
  name=${row%%:*}
  for b in old new; do
    printf "%-4s %-22s" "$b" "$name"
    awk -v b="$b" -v n="$name" '$1 == b && $2 == n { print $3 }' "$out/cpu.txt" | sort -g | tr '\n' ' '
    echo
  done
done | tee "$out/summary.txt"
