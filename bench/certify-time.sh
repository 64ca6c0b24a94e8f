#!/usr/bin/env bash
# Where a certification run's time goes: the embedded suite (or the given paths) against one
# target profile, with figures from the run's own event stream and the harness process's CPU.
#
#   bench/certify-time.sh PROFILE [--release | --binary PATH] [--cold] [-- RUN-ARGS…]
#
# A profile with a fast start (`fast_start:`, harness/docs/fast-start.md) starts warm; --cold
# starts every deployment cold. The warm server's CPU is counted with the rest.
#
# Prints: wall time; CPU of the harness and everything it started (user + system, and the mean
# number of busy cores); scenarios run and skipped; deployments started; the sum of scenario
# times, of step times (waiting on the implementation and the mocks) and of the rest; the sums of
# each phase the runner times per scenario (mocks, start: render and spawn, ready, steps, stop:
# observations and teardown, judge); the ten longest scenarios. RUN-ARGS go to `pallas-conformance run` (e.g. `--jobs 2`, `--forget-durations`, paths).
#
# Figures, not a test: nothing is asserted. The binary is the debug build README's `cargo run`
# makes, or with --release the release build; either is built first (a no-op when up to date), so
# the figures are never a stale binary's.
set -euo pipefail

cd "$(dirname "$0")/.."
profile=${1:?usage: bench/certify-time.sh PROFILE [--release | --binary PATH] [--cold] [-- RUN-ARGS…]}
shift
binary=""
build=debug
cold=()
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --release) build=release; shift ;;
    --cold) cold=(--cold); shift ;;
    --) shift; break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
target_dir=${CARGO_TARGET_DIR:-target}
if [ -z "$binary" ]; then
  binary="$target_dir/$build/pallas-conformance"
  if [ "$build" = release ]; then
    cargo build -q --release -p pallas-conformance --bin pallas-conformance
  else
    cargo build -q -p pallas-conformance --bin pallas-conformance
  fi
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paths=("$@")
has_path=0
for a in "${paths[@]}"; do case "$a" in -*) ;; *) has_path=1 ;; esac; done
[ "$has_path" = 1 ] || paths+=(scenarios)

# CPU of the harness and its children (the implementation, its Python, the mocks in-process):
# `times` (not in a subshell) reports this shell's waited-for children, so the build above and
# the mktemp are counted before the run and taken off after it.
times >"$out/times-before"
start_ns=$(date +%s%N)
set +e
"$binary" run "${paths[@]}" --target "$profile" "${cold[@]}" --events "$out/events.jsonl" >"$out/run.log" 2>&1
status=$?
set -e
end_ns=$(date +%s%N)
times >"$out/times"
cpu="$(tail -1 "$out/times-before") $(tail -1 "$out/times")"

python3 - "$out/events.jsonl" "$start_ns" "$end_ns" "$cpu" "$status" "$profile" <<'PY'
import json, re, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
start, end = int(sys.argv[2]), int(sys.argv[3])
wall = (end - start) / 1e9
def secs(t):
    m = re.match(r"(\d+)m([\d.]+)s", t)
    return int(m.group(1)) * 60 + float(m.group(2)) if m else 0.0
before_user, before_system, after_user, after_system = (secs(t) for t in sys.argv[4].split())
user, system = after_user - before_user, after_system - before_system
steps, finished = {}, []
for e in events:
    kind = e.get("event")
    if kind == "step_done":
        steps[e["index"]] = steps.get(e["index"], 0.0) + e.get("elapsed_ms", 0.0)
    elif kind == "scenario_finished":
        finished.append(e)
ran = [f for f in finished if f.get("skipped") is None]
skipped = len(finished) - len(ran)
total = sum(f["duration_ms"] for f in ran) / 1e3
# Steps of a parallel group overlap: a scenario's step time is at most its wall time.
in_steps = sum(min(steps.get(f["index"], 0.0), f["duration_ms"]) for f in ran) / 1e3
print(f"target            {sys.argv[6]} (run exit {sys.argv[5]})")
print(f"wall              {wall:.1f} s")
print(f"CPU               {user + system:.1f} s (user {user:.1f}, system {system:.1f}); mean busy cores {(user + system) / wall:.2f}")
print(f"scenarios         {len(ran)} run, {skipped} skipped; deployments started {len(ran)} (one per scenario run)")
print(f"scenario time     {total:.1f} s summed: {in_steps:.1f} s in steps, {total - in_steps:.1f} s around them (mocks, start and readiness, judging, stop)")
# Each scenario's own phase times (`scenario_finished.phases`), summed over the scenarios that
# ran to judging.
phased = [f["phases"] for f in ran if f.get("phases")]
if phased:
    names = ["mocks", "start", "ready", "steps", "stop", "judge"]
    sums = {n: sum(p.get(f"{n}_ms", 0.0) for p in phased) / 1e3 for n in names}
    print(f"phases            summed over {len(phased)} scenario(s): " + ", ".join(f"{n} {sums[n]:.1f} s" for n in names))
print("longest:")
for f in sorted(ran, key=lambda f: -f["duration_ms"])[:10]:
    print(f"  {f['duration_ms'] / 1e3:7.1f} s  {f['id']}  (steps {steps.get(f['index'], 0.0) / 1e3:.1f} s)")
PY
