#!/usr/bin/env bash
# Install (or reuse) the pinned mastra set of certify/mastra/package-lock.json in DIR and print the
# path of the Node 22 binary that runs certify/mastra/server.mjs (certify/node/setup.sh).
#
#   certify/mastra/setup.sh DIR
exec "$(dirname "$0")/../node/setup.sh" "$(dirname "$0")" "$@"
