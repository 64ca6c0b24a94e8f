// A Mastra deployment served over MCP Streamable HTTP, built from the files the conformance
// harness renders for a scenario, read as plain data by ./deployment.mjs (certify/node/, shared by
// the Node certifications: fastagent.config.yaml, fastagent.secrets.yaml, agents/<name>.md).
//
// Every agent becomes a Mastra `Agent` whose model is the OpenAI (or Anthropic) AI SDK provider
// pointed at the mock LLM, with the tools of its downstream MCP servers from an `MCPClient`.
// One `MCPServer({agents})` serves them all; @mastra/mcp names each agent's tool `ask_<agent>`
// with the argument `{message}`. Tools reach the model as `<server>__<tool>` (the scenarios'
// `CALL_TOOL` directives use that name; MCPClient.listTools() would say `<server>_<tool>`).
//
// The same file serves both certified lines of @mastra/mcp: 1.18.0 (certify/mastra/, MCP
// 2025-11-25 with sessions) and 2.0.0 (certify/mastra-2/, MCP 2026-07-28 only, stateless). What it
// uses — `MCPServer({id, name, version, tools, agents})`, `startHTTP({url, httpPath, req, res})`,
// `close()`, `MCPClient({id, servers: {url, requestInit}, timeout})`,
// `listToolsetsWithErrors()`, `disconnect()` — is the same in both; the 2.0 MCPClient reaches
// the scenarios' mock servers by `server/discover`, falling back to `initialize`.
//
//   node server.mjs --dir RUN_DIR --port PORT [--host 127.0.0.1]
//
// It listens only once every agent is built and every downstream server listed, so a TCP
// connection (or `GET /`, 200) means ready. SIGTERM/SIGINT close the MCP clients and exit.
import http from "node:http";
import process from "node:process";

import { Agent } from "@mastra/core/agent";
import { MCPClient, MCPServer } from "@mastra/mcp";

import { aiSdkModel, options, readDeployment } from "./deployment.mjs";

const { dir, port, host } = options();
const deployment = readDeployment(dir);
const { servers } = deployment;
const clients = [];

async function toolsFor(name, serverNames) {
  const wanted = Object.fromEntries(
    serverNames.filter((s) => servers[s]).map((s) => [
      s,
      { url: new URL(servers[s].url), requestInit: { headers: servers[s].headers ?? {} } },
    ]),
  );
  if (Object.keys(wanted).length === 0) return {};
  const client = new MCPClient({ id: `agent-${name}`, servers: wanted, timeout: 60_000 });
  clients.push(client);
  const { toolsets, errors } = await client.listToolsetsWithErrors();
  for (const [s, e] of Object.entries(errors ?? {})) console.error(`agent ${name}: MCP server ${s}: ${e}`);
  const tools = {};
  for (const [s, set] of Object.entries(toolsets)) {
    for (const [t, tool] of Object.entries(set)) tools[`${s}__${t}`] = tool;
  }
  return tools;
}

const agents = {};
for (const { name, description, instruction, model, servers: names } of deployment.agents) {
  agents[name] = new Agent({
    id: name,
    name,
    // MCPServer refuses an agent without a description.
    description: description ?? `The ${name} agent.`,
    instructions: instruction,
    model: aiSdkModel(model, deployment),
    tools: await toolsFor(name, names),
  });
}

const mcp = new MCPServer({
  id: "pallas-kit-mastra",
  name: "pallas-kit-mastra",
  version: "1.0.0",
  tools: {},
  agents,
});

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", `http://${host}:${port}`);
  if (url.pathname === "/" && req.method === "GET") {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("ok\n");
    return;
  }
  await mcp.startHTTP({ url, httpPath: "/mcp", req, res });
});

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  server.close();
  await Promise.allSettled([mcp.close(), ...clients.map((c) => c.disconnect())]);
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

server.listen(port, host, () => {
  console.log(`mastra: ${Object.keys(agents).length} agent(s) as ask_<agent> on http://${host}:${port}/mcp`);
});
