#!/usr/bin/env bash
# Install (or reuse) the pinned official MCP conformance suite and Node 22 (the npm package
# `node@22`) under DIR, and print two lines: the node binary and the suite's entry point.
#
#   certify/mcp-conformance/install.sh DIR
set -euo pipefail
SUITE_VERSION=0.1.16
NODE_SPEC=node@22
install_dir=${1:?usage: install.sh DIR}
suite_pkg="$install_dir/node_modules/@modelcontextprotocol/conformance/package.json"
installed=""
[ -f "$suite_pkg" ] && installed="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$suite_pkg")"
if [ "$installed" != "$SUITE_VERSION" ] || [ ! -x "$install_dir/node_modules/node/bin/node" ]; then
  mkdir -p "$install_dir"
  npm install --prefix "$install_dir" --no-audit --no-fund --loglevel=error \
    "$NODE_SPEC" "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null
fi
echo "$install_dir/node_modules/node/bin/node"
echo "$install_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
