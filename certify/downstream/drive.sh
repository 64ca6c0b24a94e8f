#!/usr/bin/env bash
# The command the official MCP conformance suite runs in client mode (`--command`), which appends
# its mock server's URL: starts the bridge of a target profile with that server as its agent's
# downstream server and sends one message, so that the bridge's own MCP client does what the
# suite's scenario judges.
#
#   certify/downstream/drive.sh [--era ERA] SCENARIO_TEMPLATE TARGET_PROFILE SERVER_URL
#
# --era: the MCP era the kit speaks to the bridge (for a bridge that speaks only 2026-07-28); the
# bridge's own client speaks to the suite's server as it will. HARNESS names the
# pallas-conformance binary (set by .ci/certify-downstream).
set -euo pipefail
usage="usage: drive.sh [--era ERA] SCENARIO_TEMPLATE TARGET_PROFILE SERVER_URL"
era=""
if [ "${1:-}" = --era ]; then
  era=${2:?$usage}
  shift 2
fi
template=${1:?$usage}
profile=${2:?$usage}
url=${3:?$usage}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s#@SERVER_URL@#$url#" "$template" >"$work/scenario.yaml"
if [ -n "$era" ]; then
  printf 'eras: ["%s"]\n' "$era" | cat - "$work/scenario.yaml" >"$work/with-era.yaml"
  mv "$work/with-era.yaml" "$work/scenario.yaml"
fi
# The kit's own verdicts on this run mean nothing here (the scenario has no checks): the suite
# judges what reached its server. The run's exit status is passed on.
"${HARNESS:?HARNESS names pallas-conformance}" run "$work/scenario.yaml" --target "$profile" \
  --generated 0 --forget-durations >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; exit 1; }
