#!/usr/bin/env bash
# The scale figures of NOTES-scale.md: a 1,000,000-run sweep and the report,
# compare and recommend over it, and plan's estimate against the default
# sweep's measured time. Prints the load average beside every figure: on a
# shared machine the wall times mean little without it (user + sys CPU
# seconds are printed too, and move less with the load).
#
#   scripts/bench-scale.sh                 everything (about 3 minutes on 2 idle cores)
#   SKIP_DEFAULT=1 scripts/bench-scale.sh  without the default sweep (plan against run)
#   SKIP_MILLION=1 …                       without the 1,000,000-run sweep
#   TEN=DIR …                              also sweep report over the dataset in DIR (read only),
#                                          e.g. the 10,000,000 runs of million.toml with
#                                          capacity_rps = {from = 10, to = 1009, step = 1}: < 500 MB
#
# Output goes to out/bench-scale/. Needs Go and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/bench-scale
mkdir -p "$out"
go build -o "$out/sweep" ./cmd/sweep
sweep=$out/sweep
fmt="%e s wall, %U s user, %S s sys, %M KiB max RSS"

measure() { # name command…: runs the command under /usr/bin/time, prints its figures and the load
  local name=$1; shift
  local before; before=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "$fmt" -o "$out/time-$name.txt" "$@" > "$out/out-$name.txt" 2> "$out/err-$name.txt" || echo "($name exited $?)" >> "$out/time-$name.txt"
  echo "$name: $(cat "$out/time-$name.txt") (load average $before → $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores)"
}

if [ -z "${SKIP_MILLION:-}" ]; then
  echo "== 1,000,000 runs (scripts/bench/million.toml)"
  rm -rf "$out/million"
  measure million-run "$sweep" run --config scripts/bench/million.toml --out "$out/million" --yes --no-report --quiet
  grep '^million:' "$out/out-million-run.txt"
  measure million-report "$sweep" report --results "$out/million" --out "$out/million-report"
  measure million-compare "$sweep" compare "$out/million" "$out/million"
  tail -1 "$out/out-million-compare.txt"
fi

if [ -n "${TEN:-}" ]; then
  echo "== sweep report over $TEN"
  measure ten-report "$sweep" report --results "$TEN" --out "$out/ten-report"
fi

if [ -z "${SKIP_DEFAULT:-}" ]; then
  echo
  echo "== the default sweep: plan's estimate, then the measured time"
  rm -rf "$out/default"
  measure default-plan "$sweep" plan --sweep default --out "$out/default"
  cat "$out/out-default-plan.txt"
  measure default-run "$sweep" run --sweep default --out "$out/default" --no-report --quiet
  grep '^default:' "$out/out-default-run.txt"
  est=$(awk '$1 == "default" {print $NF}' "$out/out-default-plan.txt")
  wall=$(cut -d' ' -f1 "$out/time-default-run.txt")
  echo "estimate $est, measured ${wall}s"
  measure default-plan-again "$sweep" plan --sweep default --out "$out/default"
  cat "$out/out-default-plan-again.txt"
  measure default-report "$sweep" report --results "$out/default" --out "$out/default-report"
  measure default-recommend "$sweep" recommend --capacity 120 --clients 2000 --outage 30s --results "$out/default"
  tail -1 "$out/out-default-recommend.txt"
  # the same question once the dataset holds every candidate run it asks for:
  # the main job's advice sweep (candidates = true in sweeps.toml)
  measure default-recommend-store "$sweep" run --sweep advice --out "$out/default" --no-report --quiet
  measure default-recommend-cached "$sweep" recommend --capacity 120 --clients 2000 --outage 30s --results "$out/default"
  tail -1 "$out/out-default-recommend-cached.txt"
  measure default-recommend-elsewhere "$sweep" recommend --capacity 300 --clients 2000 --outage 30s --results "$out/default"
  tail -1 "$out/out-default-recommend-elsewhere.txt"
fi
