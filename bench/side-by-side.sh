#!/usr/bin/env bash
# Side-by-side figures: the reference Pallas and fast-agent 0.7.22 `serve`, each started by
# `pallas-conformance load` through its target profile against the same in-process mock OpenAI
# model (final text at once), with the same history scope, then a table of ratios.
#
#   bench/side-by-side.sh [--fast] [--out DIR]
#
# For each implementation, each scope (`request`, and `shared`: the default of both the reference
# and fast-agent 0.7.22) and each session count (1 and 32), one run on a freshly started server:
# startup to ready, idle RSS, throughput, p50, RSS after the load. The server is pinned to core 0
# and the load tool (with its mock model) to core 1 when `taskset` is available.
#
#   --fast      2 s measured after 0.5 s of warm-up per run (default: 10 s after 2 s); a smoke
#               test: fast-agent's calls at 32 sessions take longer than that window, so its
#               32-session rows may show no completed call
#   --out DIR   keep each run's JSON report there (default: target/side-by-side)
#
# Environment: FAST_AGENT_0_7_22_VENV (the fast-agent venv; default
# target/fast-agent/0.7.22, created by certify/fast-agent/setup.sh when missing). When fast-agent
# cannot be set up, its rows say so and the reference figures are still printed.
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

fast_agent_ok=yes
export FAST_AGENT_0_7_22_VENV=${FAST_AGENT_0_7_22_VENV:-$target_dir/fast-agent/0.7.22}
if ! certify/fast-agent/setup.sh 0.7.22 "$FAST_AGENT_0_7_22_VENV" >/dev/null 2>"$out/fast-agent-setup.log"; then
  fast_agent_ok="no (setup failed: $out/fast-agent-setup.log)"
fi

pin_load=()
pin_server=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_load=(taskset -c 1)
  pin_server=(--pin-server 0)
fi

run() { # name profile scope sessions
  local name=$1 profile=$2 scope=$3 n=$4
  local json="$out/$name-$scope-$n.json"
  rm -f "$json"
  echo "== $name, instance_scope $scope, $n session(s)" >&2
  "${pin_load[@]}" "$load" load --target "$profile" "${pin_server[@]}" --instance-scope "$scope" \
    --sessions "$n" --duration "$duration" --warmup "$warmup" --call-timeout 60s \
    --no-series --json "$json" >&2 || echo "   (exit $?: see the table above)" >&2
}

for scope in request shared; do
  for n in 1 32; do
    run reference "$ref_profile" "$scope" "$n"
    if [ "$fast_agent_ok" = yes ]; then
      run fast-agent "$fa_profile" "$scope" "$n"
    fi
  done
done

python3 - "$out" "$duration" "$fast_agent_ok" <<'PY'
import json, os, sys

out, duration, fa_ok = sys.argv[1], sys.argv[2], sys.argv[3]

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

rows = []
for scope, label in (("request", "request"), ("shared", "default (shared)")):
    figures = [
        ("throughput, 1 session", ("throughput",), 1, "/s", True),
        ("throughput, 32 sessions", ("throughput",), 32, "/s", True),
        ("p50, 1 session", ("latency_ms", "p50"), 1, "ms", False),
        ("p50, 32 sessions", ("latency_ms", "p50"), 32, "ms", False),
        ("startup to ready", ("startup_ms",), 1, "ms", False),
        ("idle RSS", ("server", "rss_idle_kib"), 1, "MiB", False),
        ("RSS after 32-session load", ("server", "rss_after_kib"), 32, "MiB", False),
    ]
    for what, path, n, unit, hib in figures:
        def figure(name):
            r = report(name, scope, n)
            # A latency of no call is no figure (a window shorter than one call).
            if r is not None and r.get("calls_ok", 0) == 0 and path[0] == "latency_ms":
                return None
            return get(r, *path)
        ref, fa = figure("reference"), figure("fast-agent")
        errs = [sum((report(x, scope, n) or {}).get("errors", {}).values()) for x in ("reference", "fast-agent")]
        rows.append((label, what, fmt(ref, unit), fmt(fa, unit), ratio(ref, fa, hib), errs))

print(f"\nside by side ({duration} per run; reference release build vs fast-agent 0.7.22; fast-agent available: {fa_ok})\n")
print("| instance_scope | figure | reference | fast-agent 0.7.22 | reference advantage |")
print("|---|---|---|---|---|")
for label, what, ref, fa, r, errs in rows:
    print(f"| {label} | {what} | {ref} | {fa} | {r} |")
failed = [(l, w, e) for l, w, _, _, _, e in rows if any(e)]
if failed:
    print("\nruns with failed calls or session operations (reference, fast-agent):")
    for l, w, e in failed:
        print(f"  {l}, {w}: {e[0]}, {e[1]}")
PY
