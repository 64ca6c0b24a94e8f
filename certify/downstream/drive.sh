#!/usr/bin/env bash
# The command the official MCP conformance suite runs in client mode (`--command`), which appends
# its mock server's URL: starts the bridge of a target profile with that server as its agent's
# downstream server and sends one message, so that the bridge's own MCP client does what the
# suite's scenario judges.
#
#   certify/downstream/drive.sh SCENARIO_TEMPLATE TARGET_PROFILE SERVER_URL
#
# HARNESS names the pallas-conformance binary (set by .ci/downstream-client).
set -euo pipefail
template=${1:?usage: drive.sh SCENARIO_TEMPLATE TARGET_PROFILE SERVER_URL}
profile=${2:?usage: drive.sh SCENARIO_TEMPLATE TARGET_PROFILE SERVER_URL}
url=${3:?usage: drive.sh SCENARIO_TEMPLATE TARGET_PROFILE SERVER_URL}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s#@SERVER_URL@#$url#" "$template" >"$work/scenario.yaml"
# The kit's own verdicts on this run mean nothing here (the scenario has no checks): the suite
# judges what reached its server. The run's exit status is passed on.
"${HARNESS:?HARNESS names pallas-conformance}" run "$work/scenario.yaml" --target "$profile" \
  --generated 0 --forget-durations >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; exit 1; }
