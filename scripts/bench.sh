#!/usr/bin/env bash
# herdsweep's benchmarks, in one place. Prints the figures the README quotes.
#
#   scripts/bench.sh            everything (about 5 minutes on 2 cores)
#   COUNT=10 scripts/bench.sh   more samples per Go benchmark (for benchstat)
#   SKIP_MILLION=1 …            without the 1,000,000-run memory check
#
# Output goes to out/bench/. Needs Go; node (for the article's JavaScript
# simulator) and GNU time (/usr/bin/time, for memory) when present.
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/bench
mkdir -p "$out"
count=${COUNT:-5}
go build -o "$out/sweep" ./cmd/sweep

echo "== simulator (go test -bench, $count samples)"
go test ./sim -run '^$' -bench 'Table1|Families|MillionClients' -count "$count" -benchtime 1s | tee "$out/sim.txt"
if go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out/sim.txt" > "$out/sim.benchstat" 2>/dev/null; then
  cat "$out/sim.benchstat"
fi

echo
echo "== table 1: Go against the article's herd.mjs on this machine"
if command -v node >/dev/null; then
  node scripts/reference/herd.mjs bench 50 | tee "$out/node.txt"
  awk '
    FNR == NR { js[$1] = $2; next }                     # node: name ms/run
    /^BenchmarkTable1\// {
      split($1, a, "/"); name = a[2]; sub(/-[0-9]+$/, "", name)
      go[name] += $3; n[name]++                          # ns/op
    }
    END {
      printf "%-14s %10s %10s %8s\n", "row", "node ms", "go ms", "speed-up"
      for (k in go) { g = go[k] / n[k] / 1e6; tg += g; tj += js[k]
        printf "%-14s %10.3f %10.3f %7.1fx\n", k, js[k], g, js[k] / g }
      printf "%-14s %10.3f %10.3f %7.1fx\n", "table 1", tj, tg, tj / tg
    }' "$out/node.txt" "$out/sim.txt" | tee "$out/speedup.txt"
else
  echo "node not found: skipped"
fi

echo
echo "== pipeline: the default sweep at 1 and 2 workers (no report)"
for w in 1 2; do
  rm -rf "$out/w$w"
  /usr/bin/time -f "%e s wall, %M KiB max RSS" -o "$out/time-w$w.txt" \
    "$out/sweep" run --sweep default --out "$out/w$w" --workers "$w" --no-report --quiet | tee "$out/run-w$w.txt"
  cat "$out/time-w$w.txt"
done
runs=$(awk '/^default:/ {print $2}' "$out/run-w1.txt")
t1=$(awk '{print $1}' "$out/time-w1.txt"); t2=$(awk '{print $1}' "$out/time-w2.txt")
awk -v r="$runs" -v a="$t1" -v b="$t2" 'BEGIN {
  printf "runs/s: %.0f at 1 worker, %.0f at 2; parallel efficiency %.0f%%\n", r/a, r/b, 100*a/(2*b) }'
"$out/sweep" diff "$out/w1" "$out/w2" | tail -1

if [ -z "${SKIP_MILLION:-}" ]; then
  echo
  echo "== memory: a 1,000,000-run sweep (scripts/bench/million.toml)"
  rm -rf "$out/million"
  /usr/bin/time -f "%e s wall, %M KiB max RSS" -o "$out/time-million.txt" \
    "$out/sweep" run --config scripts/bench/million.toml --out "$out/million" --yes --no-report --quiet
  cat "$out/time-million.txt"
fi
