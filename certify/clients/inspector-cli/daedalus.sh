#!/usr/bin/env bash
# The official MCP Inspector's CLI (`mcp-inspector --cli`, pinned in package-lock.json) driven as
# a Daedalus, as thin as a developer would script it:
#   daedalus.sh [--agent ID] [--bearer TOKEN] [--message TEXT]... REGISTRY_URL
# Reads the registry (seed 000 §1, §3), calls `get_health` on every agent's `streamable-http`
# remote, then sends each message to the agent with a fresh `progressToken` in `_meta`
# (`--tool-metadata`) and the user's bearer, if given, as `Authorization: Bearer` on every request
# (`--header`). An agent whose health is `error` gets no message (exit 3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inspector="$here/node_modules/.bin/mcp-inspector"
agent="" messages=() auth=()
while [ $# -gt 1 ]; do
  case $1 in
    --agent) agent=$2; shift ;;
    --message) messages+=("$2"); shift ;;
    --bearer) auth=(--header "Authorization: Bearer $2"); shift ;;
  esac
  shift
done
registry=${1%/}

# id<TAB>url of every agent, in registry order.
agents=$(curl -fsS --max-time 30 "$registry/.well-known/mcp/server.json" | node -e '
  let doc = ""; process.stdin.on("data", (d) => (doc += d)).on("end", () => {
    for (const { server } of JSON.parse(doc).servers ?? []) {
      const remote = (server.remotes ?? []).find((r) => r.type === "streamable-http");
      if (remote) console.log(`${server.name.split("/").pop()}\t${remote.url}`);
    }
  });')

call() { timeout 30 "$inspector" --cli "$1" "${auth[@]}" --transport http --method "${@:2}"; }
status_of() { node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{try{const r=JSON.parse(t);console.log(JSON.parse(r.content[0].text).status)}catch{console.log("error")}})'; }

target="" target_status=""
while IFS=$'\t' read -r id url; do
  [ -n "$id" ] || continue
  # A health check that fails (the call exits non-zero, or its answer is not seed 000's JSON) is
  # `error` (seed 000 §3).
  if answer=$(call "$url" tools/call --tool-name get_health); then
    status=$(printf '%s' "$answer" | status_of)
  else
    status=error
  fi
  echo "$id: $status"
  if [ -z "$target" ] && { [ -z "$agent" ] || [ "$agent" = "$id" ]; }; then
    target=$url target_status=$status
  fi
done <<<"$agents"

[ ${#messages[@]} -gt 0 ] || exit 0
[ -n "$target" ] || { echo "no agent $agent in the registry" >&2; exit 1; }
if [ "$target_status" = error ]; then
  echo "${agent:-agent}: health is error; chat disabled" >&2
  exit 3
fi
tool=$(call "$target" tools/list | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>console.log(JSON.parse(t).tools.find(x=>x.name!=="get_health").name))')
n=0
for m in "${messages[@]}"; do
  n=$((n + 1))
  call "$target" tools/call --tool-name "$tool" --tool-arg "message=$m" \
    --tool-metadata "progressToken=daedalus-$$-$n"
done
