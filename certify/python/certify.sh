#!/usr/bin/env bash
# Certify a Python agent runtime served over MCP (Agno AgentOS, LangGraph Server, Google ADK,
# Microsoft Agent Framework, BeeAI Framework) with the kit. Called by .ci/certify-agno, -langgraph,
# -google-adk, -ms-agent-framework and -beeai, which set:
#
#   NAME      report and profile name (scenarios/targets/NAME.yaml, docs/certification/NAME.*)
#   PACKAGE   the PyPI distribution whose version the report names (e.g. agno)
#   TITLE     the implementation's name in the certified tables
#   VENV_VAR  the environment variable the profile reads its venv from (e.g. AGNO_VENV)
#
#   .ci/certify-NAME [--update | --setup-only] [--jobs N|auto] [--out DIR] [--filter GLOB]...
#
# 1. creates (or reuses) the pinned CPython 3.13 venv of certify/NAME/requirements.txt
#    (certify/python/setup-venv.sh) under the cargo target dir;
# 2. builds pallas-conformance;
# 3. runs the Pallas scenarios under scenarios/ (not the other systems' packs under scenarios/mcpctl/,
#    percolate/, agentic-server/ and mixed/; not those written only for an MCP era the runtime's
#    `mcp` package does not speak) against scenarios/targets/NAME.yaml, writing the Markdown, JSON
#    and JUnit reports to DIR (default reports/, as NAME.*);
# 4. compares every verdict with the full-verdict baseline certify/NAME/verdicts.yaml
#    (certify/verdicts.sh): a scenario that differs runs once more, and a difference that
#    reproduces fails.
#
# Exit status: 0 every verdict as recorded, 1 a verdict differs (printed: scenario, entry,
# recorded → seen), 2 invalid input, 3 setup or harness error.
#
# --update rewrites the committed certification instead of checking it: docs/certification/NAME.{md,json}
# (stamped with the kit commit; the reviewer's notes after the `<!-- reviewer-notes -->` line are
# kept; a "Changes since the last report" section lists each verdict that changed), the baseline
# certify/NAME/verdicts.yaml, and the certified tables of docs/certification/README.md and
# README.md. Review the diff before committing it.
#
# Environment: $VENV_VAR (venv directory; default TARGET_DIR/NAME/venv), CARGO_TARGET_DIR, PYTHON
# (a CPython 3.13 for the venv), PALLAS_CONFORMANCE (certify/harness.sh), CERTIFY_JOBS (default
# auto: the harness keeps one scenario per core going and starts more while the CPU is idle, so
# the scenarios that wait on a retry back-off run beside the others; a number fixes it).
set -euo pipefail
: "${NAME:?}" "${PACKAGE:?}" "${TITLE:?}" "${VENV_VAR:?}"
cd "$(dirname "$0")/../.."
root=$(pwd)

update=false
setup_only=false
jobs=${CERTIFY_JOBS:-auto}
out="$root/reports"
filters=()
usage() {
  sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --update) update=true ;;
    --setup-only) setup_only=true ;;
    --jobs) jobs=${2:?--jobs needs a number or auto}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --filter) filters+=(--filter "${2:?--filter needs a glob}"); shift ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument $1" >&2; usage ;;
  esac
  shift
done

profile="scenarios/targets/$NAME.yaml"
target_dir=${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}
venv=${!VENV_VAR:-$target_dir/$NAME/venv}
mkdir -p "$out"

echo "-- $NAME venv: $venv"
certify/python/setup-venv.sh "certify/$NAME/requirements.txt" "$venv" >/dev/null
"$setup_only" && exit 0
installed=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$PACKAGE'))")
# The MCP eras the runtime's MCP server speaks: its `mcp` package's newest protocol version.
latest=$("$venv/bin/python" -c 'import mcp.types as t; print(t.LATEST_PROTOCOL_VERSION)')
case $latest in
  2026-*) eras=2025-11-25,2026-07-28 ;;
  *) eras=2025-11-25 ;;
esac
echo "   $PACKAGE $installed (mcp protocol $latest)"
export "$VENV_VAR=$venv"

. certify/harness.sh
certify_harness "$target_dir"
harness=$HARNESS

# NOT_RUN (set by .ci/certify-NAME): newline-separated `scenario-id=why` of scenarios that cannot
# be judged on this runtime; they are not run, and the report lists them with the reason.
selection=$(NOT_RUN="${NOT_RUN:-}" "$venv/bin/python" certify/python/select_scenarios.py "$eras" scenarios)
skipped=$(printf '%s\n' "$selection" | awk -F'\t' '$1 == "skip" {print $2 "\t" $3 "\t" $4}')
others=$(printf '%s\n' "$selection" | awk -F'\t' '$1 == "other" {n[$2]++} END {for (f in n) print "scenarios/" f "/ (" n[f] ")"}' \
  | sort | paste -sd, - | sed 's/,/, /g')
run_files=()
while IFS= read -r f; do run_files+=("$f"); done \
  < <(printf '%s\n' "$selection" | awk -F'\t' '$1 == "run" {print $2}')
[ ${#run_files[@]} -gt 0 ] || { echo "error: no scenario selected under scenarios/" >&2; exit 2; }
echo "-- ${#run_files[@]} Pallas scenario file(s) selected"

echo "-- running the scenarios against $profile (jobs: $jobs)"
status=0
started=$(date +%s)
run=("$harness" run "${run_files[@]}" --target "$profile" --self-test --jobs "$jobs" "${filters[@]}")
# The committed report's scenario times: the longest start first on a machine with none remembered.
if [ -f "docs/certification/$NAME.json" ]; then run+=(--durations-from "docs/certification/$NAME.json"); fi
"${run[@]}" --report-json "$out/$NAME.json" --markdown "$out/$NAME.md" --junit "$out/$NAME.junit.xml" \
  || status=$?
echo "-- run time: $(( $(date +%s) - started )) s"
# Every verdict against the full-verdict baseline certify/NAME/verdicts.yaml (or, with --update,
# recorded there): certify/verdicts.sh.
. certify/verdicts.sh
verdicts="certify/$NAME/verdicts.yaml"
certify_verdicts "$verdicts" "$harness" "$out/$NAME.json" "$update" "$status" -- "${run[@]}"
status=$CERTIFY_STATUS
commit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("kit_commit","unknown"))' "$out/$NAME.json" 2>/dev/null || echo unknown)

if [ -f "$out/$NAME.md" ] && { [ -n "$skipped" ] || [ -n "$others" ]; }; then
  {
    printf '\n## Scenarios not run\n\n'
    if [ -n "$others" ]; then
      printf 'Only the Pallas scenarios are part of this certification. The contract packs of other systems\n'
      printf '(seeds 002-004) and the mixed-world scenarios that need their mock servers are left out: %s.\n\n' "$others"
    fi
    if [ -n "$skipped" ]; then
      printf 'Pallas scenarios left out by `.ci/certify-%s` (its `mcp` package speaks the MCP era(s) %s):\n\n' "$NAME" "${eras//,/, }"
      printf '| scenario | file | why |\n|---|---|---|\n'
      printf '%s\n' "$skipped" | awk -F'\t' '{print "| `" $1 "` | `" $2 "` | " $3 " |"}'
    fi
  } >> "$out/$NAME.md"
fi
echo "-- reports: $out/$NAME.{md,json,junit.xml}"

if $update; then
  [ -f "$out/$NAME.json" ] || { echo "error: the run wrote no JSON report" >&2; exit 3; }
  doc="docs/certification/$NAME.md"
  notes=""
  if [ -f "$doc" ] && grep -q '^<!-- reviewer-notes -->' "$doc"; then
    notes=$(sed -n '/^<!-- reviewer-notes -->/,$p' "$doc")
  fi
  changes=""
  if [ -f "docs/certification/$NAME.json" ]; then
    changes=$(python3 certify/fast-agent/changes.py "docs/certification/$NAME.json" "$out/$NAME.json")
  fi
  {
    printf '<!-- Generated by .ci/certify-%s --update with %s %s; everything above the reviewer-notes line is regenerated. -->\n\n' "$NAME" "$PACKAGE" "$installed"
    printf '_Made by pallas-conformance at commit `%s`; every verdict is recorded in [`%s`](../../%s) and re-made by CI._\n\n' "$commit" "$verdicts" "$verdicts"
    cat "$out/$NAME.md"
    if [ -n "$changes" ]; then printf '\n%s\n' "$changes"; fi
    if [ -n "$notes" ]; then printf '\n%s\n' "$notes"; fi
  } > "$doc"
  cp "$out/$NAME.json" "docs/certification/$NAME.json"
  # The reviewed-verdicts table of the notes, from the report and certify/$NAME/review.json: a verdict
  # no finding reviews is named here (and fails harness/tests/harness/profiles.rs) until reviewed.
  python3 certify/review-table.py "docs/certification/$NAME.md" "docs/certification/$NAME.json" "certify/$NAME/review.json" || echo "warning: review the verdicts above in certify/$NAME/review.json" >&2
  python3 certify/certified-table.py docs/certification README.md
  echo "-- updated $doc, docs/certification/$NAME.json, certify/$NAME/verdicts.yaml and the certified tables"
fi
exit "$status"
