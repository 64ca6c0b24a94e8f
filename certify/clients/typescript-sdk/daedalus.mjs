// A Daedalus-side driver on the official MCP TypeScript SDK, as thin as a Daedalus developer
// would write it: `node daedalus.mjs [--agent ID] [--bearer TOKEN] [--message TEXT]... REGISTRY_URL`.
// Discovers the agents from the registry (seed 000 §1, §3), connects to each through its
// `streamable-http` remote, reads its health with `get_health`, then sends each message to the
// agent with the SDK's progress callback (which puts a `progressToken` in `_meta`) and prints
// the progress on stderr and the reply on stdout. An agent whose health is `error` gets no
// message (exit 3). The user's bearer, if given, rides every request as `Authorization: Bearer`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const registry = argv.pop();
let wanted;
let bearer;
const messages = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--agent") wanted = argv[++i];
  else if (argv[i] === "--message") messages.push(argv[++i]);
  else if (argv[i] === "--bearer") bearer = argv[++i];
}

const doc = await (await fetch(`${registry.replace(/\/$/, "")}/.well-known/mcp/server.json`)).json();
const agents = [];
for (const entry of doc.servers ?? []) {
  const server = entry.server;
  const remote = (server.remotes ?? []).find((r) => r.type === "streamable-http");
  if (!remote) continue;
  const id = server.name.split("/").pop();
  const client = new Client({ name: "daedalus-typescript-sdk", version: "1.0.0" });
  const requestInit = bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(remote.url), { requestInit }));
  let status = "error";
  try {
    const health = await client.callTool({ name: "get_health", arguments: {} });
    status = JSON.parse(health.content?.[0]?.text ?? "{}").status ?? "error";
  } catch (e) {
    console.error(`${id}: health check failed: ${e.message}`);
  }
  console.log(`${id}: ${status}`);
  agents.push({ id, client, status });
}

let code = 0;
if (messages.length > 0) {
  const agent = agents.find((a) => wanted === undefined || a.id === wanted);
  if (!agent) {
    console.error(`no agent ${wanted} in the registry`);
    code = 1;
  } else if (agent.status === "error") {
    console.error(`${agent.id}: health is error; chat disabled`);
    code = 3;
  } else {
    const { tools } = await agent.client.listTools();
    const chat = tools.find((t) => t.name !== "get_health");
    for (const message of messages) {
      const result = await agent.client.callTool({ name: chat.name, arguments: { message } }, undefined, {
        onprogress: (p) => console.error(`… ${p.message ?? p.progress}`),
      });
      console.log(result.content?.map((c) => c.text ?? "").join("\n"));
    }
  }
}
for (const a of agents) await a.client.close();
process.exit(code);
