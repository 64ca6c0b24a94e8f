#!/usr/bin/env bash
# Side-by-side figures: the reference Pallas, fast-agent 0.7.22 `serve` and Mastra's `MCPServer`
# (@mastra/mcp 1.18.0), each started by `pallas-conformance load` through its target profile
# against the same in-process mock OpenAI model (final text at once), then tables of ratios.
#
#   bench/side-by-side.sh [--fast] [--out DIR]
#
# Two tables:
#  - best against best: each bridge in its fastest supported history scope: the reference in
#    `request` (no history kept), fast-agent in `connection` (one agent instance per MCP session:
#    its `request` scope rebuilds the agent for every call, its `shared` scope carries every
#    session's turns to the model), Mastra as it serves agents (an agent without Memory keeps no
#    history; it has no scope to set);
#  - same scope: the reference and fast-agent both in `request`, and both in `shared` (the
#    default of both).
# For each run, on a freshly started server, with 1 and 32 sessions: startup to ready, idle RSS,
# throughput, p50, RSS after the load. The server is pinned to core 0 and the load tool (with its
# mock model) to core 1 when `taskset` is available.
#
#   --fast      2 s measured after 0.5 s of warm-up per run (default: 10 s after 2 s); a smoke
#               test: fast-agent's calls at 32 sessions take longer than that window, so its
#               32-session rows may show no completed call
#   --out DIR   keep each run's JSON report there (default: target/side-by-side)
#
# Environment: FAST_AGENT_0_7_22_VENV (the fast-agent venv; default target/fast-agent/0.7.22,
# created by certify/fast-agent/setup.sh when missing), MASTRA_DIR (the Mastra install; default
# target/mastra, made by certify/mastra/setup.sh). When one cannot be set up, its columns say so
# and the other figures are still printed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
duration=10s
warmup=2s
out=target/side-by-side
while [ $# -gt 0 ]; do
  case $1 in
    --fast) duration=2s; warmup=500ms ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--fast] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"

# One invocation for both, so that their dependencies share one feature set (two would rebuild).
cargo build --release -q -p pallas-conformance --bin pallas-conformance -p pallas-reference --bin pallas
target_dir=$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)
load="$target_dir/release/pallas-conformance"

# The reference profile, launching the release binary that was just built.
ref_profile="$out/reference-release.yaml"
sed -e 's|^build:.*|build: []|' \
    -e 's|{{cargo_target_dir}}/debug/pallas|{{cargo_target_dir}}/release/pallas|' \
    scenarios/targets/reference.yaml > "$ref_profile"
fa_profile=scenarios/targets/fast-agent-0.7.22.yaml
mastra_profile=scenarios/targets/mastra.yaml

fast_agent_ok=yes
export FAST_AGENT_0_7_22_VENV=${FAST_AGENT_0_7_22_VENV:-$target_dir/fast-agent/0.7.22}
if ! certify/fast-agent/setup.sh 0.7.22 "$FAST_AGENT_0_7_22_VENV" >/dev/null 2>"$out/fast-agent-setup.log"; then
  fast_agent_ok="no (setup failed: $out/fast-agent-setup.log)"
fi
mastra_ok=yes
export MASTRA_DIR=${MASTRA_DIR:-$target_dir/mastra}
if ! certify/mastra/setup.sh "$MASTRA_DIR" >/dev/null 2>"$out/mastra-setup.log"; then
  mastra_ok="no (setup failed: $out/mastra-setup.log)"
fi

. bench/load-one.sh

run() { # name profile scope sessions
  local name=$1 profile=$2 scope=$3 n=$4
  local json="$out/$name-$scope-$n.json"
  rm -f "$json"
  echo "== $name, instance_scope $scope, $n session(s)" >&2
  load_one "$profile" "$scope" "$n" "$json" >&2 || echo "   (exit $?: see the table above)" >&2
}

for n in 1 32; do
  # Best against best: the rows of the reference in `request` come from the same-scope runs.
  if [ "$fast_agent_ok" = yes ]; then
    run fast-agent "$fa_profile" connection "$n"
  fi
  if [ "$mastra_ok" = yes ]; then
    # Mastra has no instance scope: the card's `instance_scope` is ignored by certify/mastra/server.mjs.
    run mastra "$mastra_profile" request "$n"
  fi
done
for scope in request shared; do
  for n in 1 32; do
    run reference "$ref_profile" "$scope" "$n"
    if [ "$fast_agent_ok" = yes ]; then
      run fast-agent "$fa_profile" "$scope" "$n"
    fi
  done
done

python3 - "$out" "$duration" "$fast_agent_ok" "$mastra_ok" <<'PY'
import json, os, sys

out, duration, fa_ok, mastra_ok = sys.argv[1:5]

def report(name, scope, n):
    p = os.path.join(out, f"{name}-{scope}-{n}.json")
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def get(r, *path):
    for k in path:
        if r is None:
            return None
        r = r.get(k)
    return r

def fmt(v, unit):
    if v is None:
        return "–"
    if unit == "MiB":
        return f"{v / 1024:.1f} MiB"
    if unit == "ms":
        return f"{v:.2f} ms" if v < 100 else f"{v:.0f} ms"
    return f"{v:,.1f}/s" if v < 100 else f"{v:,.0f}/s"

def ratio(a, b, higher_is_better):
    if a is None or b is None or a == 0 or b == 0:
        return "–"
    return f"{(a / b if higher_is_better else b / a):.1f}×"

FIGURES = [
    ("throughput, 1 session", ("throughput",), 1, "/s", True),
    ("throughput, 32 sessions", ("throughput",), 32, "/s", True),
    ("p50, 1 session", ("latency_ms", "p50"), 1, "ms", False),
    ("p50, 32 sessions", ("latency_ms", "p50"), 32, "ms", False),
    ("startup to ready", ("startup_ms",), 1, "ms", False),
    ("idle RSS", ("server", "rss_idle_kib"), 1, "MiB", False),
    ("RSS after 32-session load", ("server", "rss_after_kib"), 32, "MiB", False),
]

def figure(name, scope, n, path):
    r = report(name, scope, n)
    # A latency of no call is no figure (a window shorter than one call).
    if r is not None and r.get("calls_ok", 0) == 0 and path[0] == "latency_ms":
        return None
    return get(r, *path)

def errors(name, scope, n):
    return sum((report(name, scope, n) or {}).get("errors", {}).values())

failed = []
print(f"\nbest against best ({duration} per run; reference release build; fast-agent 0.7.22 available: {fa_ok}; "
      f"Mastra available: {mastra_ok})\n")
print("| figure | reference (`request`) | fast-agent 0.7.22 (`connection`) | Mastra (no Memory) "
      "| reference advantage over fast-agent | over Mastra |")
print("|---|---|---|---|---|---|")
best = (("reference", "request"), ("fast-agent", "connection"), ("mastra", "request"))
for what, path, n, unit, hib in FIGURES:
    ref, fa, ma = (figure(name, scope, n, path) for name, scope in best)
    print(f"| {what} | {fmt(ref, unit)} | {fmt(fa, unit)} | {fmt(ma, unit)} "
          f"| {ratio(ref, fa, hib)} | {ratio(ref, ma, hib)} |")
    errs = [errors(name, scope, n) for name, scope in best]
    if any(errs):
        failed.append(("best", what, errs))

print(f"\nsame scope ({duration} per run; reference release build vs fast-agent 0.7.22)\n")
print("| instance_scope | figure | reference | fast-agent 0.7.22 | reference advantage |")
print("|---|---|---|---|---|")
for scope, label in (("request", "request"), ("shared", "default (shared)")):
    for what, path, n, unit, hib in FIGURES:
        ref, fa = figure("reference", scope, n, path), figure("fast-agent", scope, n, path)
        print(f"| {label} | {what} | {fmt(ref, unit)} | {fmt(fa, unit)} | {ratio(ref, fa, hib)} |")
        errs = [errors(x, scope, n) for x in ("reference", "fast-agent")]
        if any(errs):
            failed.append((label, what, errs))
if failed:
    print("\nruns with failed calls or session operations (per bridge, in column order):")
    for l, w, e in failed:
        print(f"  {l}, {w}: {', '.join(map(str, e))}")
PY
