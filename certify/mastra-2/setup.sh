#!/usr/bin/env bash
# Install (or reuse) the pinned mastra set of certify/mastra-2/package-lock.json (@mastra/mcp 2.x)
# in DIR and print the path of the Node 22 binary that runs the adapter. The adapter is
# certify/mastra/server.mjs, the same as @mastra/mcp 1.18.0's (certify/node/setup.sh).
#
#   certify/mastra-2/setup.sh DIR
here=$(dirname "$0")
exec "$here/../node/setup.sh" "$here" "$@" "$here/../mastra/server.mjs"
