# Sourced by the bench scripts: one `pallas-conformance load` run of a profile, the server pinned
# to core 0 and the load tool (with its mock model) to core 1 when `taskset` is available.
#
#   load_one PROFILE SCOPE SESSIONS JSON
#
# Reads `load` (the binary), `duration` and `warmup` from the sourcing script; the run's report
# goes to JSON, its output to stdout, and its exit status is returned.
pin_load=()
pin_server=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_load=(taskset -c 1)
  pin_server=(--pin-server 0)
fi

load_one() {
  local profile=$1 scope=$2 n=$3 json=$4
  "${pin_load[@]}" "$load" load --target "$profile" "${pin_server[@]}" --instance-scope "$scope" \
    --sessions "$n" --duration "$duration" --warmup "$warmup" --call-timeout 60s \
    --no-series --json "$json"
}
