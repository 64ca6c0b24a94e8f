#!/usr/bin/env bash
# Install (or reuse) the pinned voltagent set of certify/voltagent/package-lock.json in DIR and print the
# path of the Node 22 binary that runs certify/voltagent/server.mjs (certify/node/setup.sh).
#
#   certify/voltagent/setup.sh DIR
exec "$(dirname "$0")/../node/setup.sh" "$(dirname "$0")" "$@"
