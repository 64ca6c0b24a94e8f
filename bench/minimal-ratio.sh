#!/usr/bin/env bash
# The reference Pallas against the minimal comparator bridge (bench/minimal-bridge: one rmcp 3.9
# Streamable HTTP agent whose `send_message` makes one pooled POST to the model), both release
# builds started by `pallas-conformance load` through their target profiles against the same
# in-process mock OpenAI model, `instance_scope: request`, 1 and 32 sessions, interleaved over
# several rounds (each round runs both bridges at both session counts, the order alternating from
# round to round). The server is pinned to core 0 and the load tool (with its mock) to core 1
# when `taskset` is available.
#
#   bench/minimal-ratio.sh [--fast] [--rounds N] [--out DIR]
#
# Prints, per bridge and session count, the medians over the rounds of the throughput and of the
# server's CPU per call (its CPU from /proc/<pid>/stat over the measured window, as the load tool
# reports it in `server.cpu_percent`, divided by the throughput), then the ratios
# reference ÷ minimal of those medians, and beside them the median of each round's own ratio
# (the two runs of a round are next to each other, so a machine busy with other work weighs on
# both alike).
#
#   --fast        a smoke test: 2 s measured after 0.5 s of warm-up, 3 rounds (default: 10 s after
#                 2 s, 7 rounds)
#   --rounds N    rounds (interleaved runs of both bridges at 1 and 32 sessions)
#   --out DIR     keep each run's JSON report there (default: target/minimal-ratio)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
duration=10s
warmup=2s
rounds=7
rounds_set=
out=target/minimal-ratio
while [ $# -gt 0 ]; do
  case $1 in
    --fast) duration=2s; warmup=500ms; [ -n "$rounds_set" ] || rounds=3 ;;
    --rounds) rounds=$2; rounds_set=yes; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--fast] [--rounds N] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
rm -f "$out"/*.json

# One invocation for all three, so that their dependencies share one feature set.
cargo build --release -q -p pallas-conformance --bin pallas-conformance \
  -p pallas-reference --bin pallas -p pallas-minimal-bridge --bin pallas-minimal-bridge
target_dir=$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)
load="$target_dir/release/pallas-conformance"

# The profiles, launching the release binaries that were just built.
ref_profile="$out/reference-release.yaml"
sed -e 's|^build:.*|build: []|' \
    -e 's|{{cargo_target_dir}}/debug/pallas|{{cargo_target_dir}}/release/pallas|' \
    scenarios/targets/reference.yaml > "$ref_profile"
min_profile="$out/minimal-release.yaml"
sed -e 's|^build:.*|build: []|' bench/minimal-bridge/target.yaml > "$min_profile"

. bench/load-one.sh

run() { # name profile sessions round
  local name=$1 profile=$2 n=$3 round=$4
  local json="$out/$name-$n-$round.json"
  echo "== round $round, $name, $n session(s)" >&2
  load_one "$profile" request "$n" "$json" >/dev/null || echo "   (exit $?)" >&2
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$rounds"); do
  for n in 1 32; do
    if [ $((round % 2)) -eq 1 ]; then
      run reference "$ref_profile" "$n" "$round"
      run minimal "$min_profile" "$n" "$round"
    else
      run minimal "$min_profile" "$n" "$round"
      run reference "$ref_profile" "$n" "$round"
    fi
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$out" "$rounds" "$duration" "$warmup" "$load_before" "$load_after" <<'PY'
import json, os, statistics, sys

out, rounds, duration, warmup, load_before, load_after = sys.argv[1:7]
rounds = int(rounds)

def runs(name, n):
    for r in range(1, rounds + 1):
        try:
            with open(os.path.join(out, f"{name}-{n}-{r}.json")) as f:
                yield json.load(f)
        except (OSError, ValueError):
            continue

def figures(name, n):
    tput, cpu, pct, errors, used = [], [], [], 0, 0
    for rep in runs(name, n):
        used += 1
        errors += rep.get("calls_failed", 0) + sum(rep.get("errors", {}).values())
        t = rep.get("throughput") or 0
        c = (rep.get("server") or {}).get("cpu_percent")
        if t > 0:
            tput.append(t)
            if c is not None:
                cpu.append(c / 100 / t * 1e6)
                pct.append(c)
    med = lambda xs: statistics.median(xs) if xs else None
    return {"runs": used, "tput": med(tput), "cpu": med(cpu), "pct": med(pct), "errors": errors,
            "tput_range": (min(tput), max(tput)) if tput else None,
            "cpu_range": (min(cpu), max(cpu)) if cpu else None}

def num(v, fmt):
    return "–" if v is None else format(v, fmt)

def ratio(a, b):
    return "–" if a is None or not b else f"{a / b:.2f}×"

print(f"\nreference ÷ minimal bridge: release builds, instance_scope request, {duration} after {warmup} "
      f"of warm-up per run, medians of {rounds} interleaved rounds (load average {load_before} → {load_after})\n")
print("| sessions | bridge | runs | throughput (median) | server CPU per call (median) | server CPU (median) | throughput min–max | CPU per call min–max | failed |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
table = {}
for n in (1, 32):
    for name in ("reference", "minimal"):
        f = table[(name, n)] = figures(name, n)
        tr = f"{f['tput_range'][0]:,.0f}–{f['tput_range'][1]:,.0f}" if f["tput_range"] else "–"
        cr = f"{f['cpu_range'][0]:.1f}–{f['cpu_range'][1]:.1f} µs" if f["cpu_range"] else "–"
        print(f"| {n} | {name} | {f['runs']} | {num(f['tput'], ',.0f')} calls/s | {num(f['cpu'], '.1f')} µs "
              f"| {num(f['pct'], '.1f')} % | {tr} | {cr} | {f['errors']} |")
def paired(n):
    """Per round, reference ÷ minimal (the two runs of a round are next to each other)."""
    tput, cpu = [], []
    for r in range(1, rounds + 1):
        try:
            with open(os.path.join(out, f"reference-{n}-{r}.json")) as f:
                a = json.load(f)
            with open(os.path.join(out, f"minimal-{n}-{r}.json")) as f:
                b = json.load(f)
        except (OSError, ValueError):
            continue
        ta, tb = a.get("throughput") or 0, b.get("throughput") or 0
        ca, cb = (a.get("server") or {}).get("cpu_percent"), (b.get("server") or {}).get("cpu_percent")
        if ta > 0 and tb > 0:
            tput.append(ta / tb)
            if ca and cb:
                cpu.append((ca / ta) / (cb / tb))
    med = lambda xs: f"{statistics.median(xs):.2f}×" if xs else "–"
    return med(tput), med(cpu)

print("\n| sessions | throughput, reference ÷ minimal | server CPU per call, reference ÷ minimal "
      "| same, median of the per-round ratios (throughput; CPU per call) |")
print("|---:|---:|---:|---:|")
for n in (1, 32):
    r, m = table[("reference", n)], table[("minimal", n)]
    pt, pc = paired(n)
    print(f"| {n} | {ratio(r['tput'], m['tput'])} | {ratio(r['cpu'], m['cpu'])} | {pt}; {pc} |")
if any(f["errors"] for f in table.values()):
    print("\nsome runs had failed calls or session operations (column `failed`)")
PY
