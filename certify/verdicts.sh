# Sourced by every .ci/certify-* script: what a certification does after its run.
#
#   certify_verdicts BASELINE HARNESS REPORT_JSON UPDATE RUN_STATUS -- RUN_COMMAND...
#
# The run's exit status 2 (invalid input) or 3 (setup or harness error) is the result as is. Else
# the JSON report is stamped with the kit commit that made it (`kit_commit`), and then:
# - UPDATE=true: `pallas-conformance verdicts write` records every verdict of the report in the
#   full-verdict baseline BASELINE (certify/NAME/verdicts.yaml);
# - UPDATE=false: `verdicts check` compares the report with that baseline. Scenarios that differ
#   run once more (RUN_COMMAND with `--filter ID` for each, writing REPORT_JSON's `.retry.json`);
#   a difference that reproduces fails (exit 1), one that does not is printed as timing.
# Sets CERTIFY_STATUS.

# The commit of the kit that judged the run: `git rev-parse HEAD`, with `-dirty` when files other
# than the certification outputs differ from it. `unknown` outside a git checkout.
kit_commit() {
  local head
  head=$(git rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; return; }
  if git status --porcelain --untracked-files=no -- . ':!docs/certification' ':!certify/*/verdicts*.yaml' \
      ':!README.md' 2>/dev/null | grep -q .; then
    echo "$head-dirty"
  else
    echo "$head"
  fi
}

# Adds `kit_commit` to a JSON report, beside `kit_version` and `suite`.
stamp_report() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, commit = sys.argv[1:]
doc = json.load(open(path))
out = {}
for k, v in doc.items():
    out[k] = v
    if k == "kit_version":
        out["kit_commit"] = commit
out.setdefault("kit_commit", commit)
json.dump(out, open(path, "w"), indent=2, ensure_ascii=False)
open(path, "a").write("\n")
PY
}

certify_verdicts() {
  local baseline=$1 harness=$2 report=$3 update=$4 status=$5
  shift 6 # the five values and `--`
  CERTIFY_STATUS=$status
  if [ "$status" -ge 2 ] || [ ! -f "$report" ]; then
    [ "$status" -ge 2 ] || CERTIFY_STATUS=3
    return
  fi
  stamp_report "$report" "$(kit_commit)"
  if $update; then
    "$harness" verdicts write "$report" --out "$baseline" || { CERTIFY_STATUS=$?; return; }
    CERTIFY_STATUS=0
    return
  fi
  if [ ! -f "$baseline" ]; then
    echo "error: no full-verdict baseline $baseline (write it with --update)" >&2
    CERTIFY_STATUS=2
    return
  fi
  local differing="${report%.json}.differing" rc=0 partial=()
  # A run narrowed by --filter is compared on the scenarios it ran.
  case " $* " in *" --filter "*) partial=(--partial) ;; esac
  "$harness" verdicts check "$report" --baseline "$baseline" --differing-out "$differing" "${partial[@]}" || rc=$?
  if [ "$rc" -eq 1 ] && [ -s "$differing" ]; then
    local retry="${report%.json}.retry.json" filters=()
    while IFS= read -r id; do filters+=(--filter "$id"); done < "$differing"
    echo "-- running the $(wc -l < "$differing") differing scenario(s) once more"
    "$@" "${filters[@]}" --report-json "$retry" >/dev/null || true
    rc=0
    "$harness" verdicts check "$report" --baseline "$baseline" --retried "$retry" "${partial[@]}" || rc=$?
  fi
  CERTIFY_STATUS=$rc
}
