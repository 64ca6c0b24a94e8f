# Sourced by every .ci/certify-* script: the pallas-conformance that judges the run.
#
#   certify_harness TARGET_DIR      sets HARNESS
#
# PALLAS_CONFORMANCE names a pallas-conformance binary to use as it is: `.ci/run` gives the one
# in the wheel it has just built from this checkout, the binary a user installs (optimised, so
# the harness's own work — mocks, client, judging — takes a fraction of a debug build's CPU beside
# the implementation). Without it, the debug build of this checkout is made (a no-op when up to
# date) and used.
certify_harness() {
  if [ -n "${PALLAS_CONFORMANCE:-}" ]; then
    if [ ! -x "$PALLAS_CONFORMANCE" ]; then
      echo "error: PALLAS_CONFORMANCE=$PALLAS_CONFORMANCE is not an executable file" >&2
      exit 3
    fi
    HARNESS=$PALLAS_CONFORMANCE
    echo "-- pallas-conformance: $HARNESS (PALLAS_CONFORMANCE)"
    return
  fi
  echo "-- building pallas-conformance"
  CARGO_TARGET_DIR="$1" cargo build -q -p pallas-conformance --bin pallas-conformance
  HARNESS="$1/debug/pallas-conformance"
}
