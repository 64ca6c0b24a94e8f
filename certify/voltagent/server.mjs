// A VoltAgent deployment served over MCP Streamable HTTP, built from the files the conformance
// harness renders for a scenario, read as plain data by ./deployment.mjs (certify/node/, shared by
// the Node certifications: fastagent.config.yaml, fastagent.secrets.yaml, agents/<name>.md).
//
// Every agent becomes a VoltAgent `Agent` (id = its name) whose model is the AI SDK's OpenAI (or
// Anthropic) provider pointed at the mock LLM, with the tools of its downstream MCP servers from
// an `MCPConfiguration`. A `VoltAgent` registers them and ONE `MCPServer` of
// @voltagent/mcp-server serves them all: each agent is the tool `agent_<id>` taking `{prompt}`,
// and its result is one text block holding the JSON `{text, finishReason, usage}` of the run.
// Tools reach the model as `<server>__<tool>` (the scenarios' `CALL_TOOL` directives use that
// name; MCPConfiguration would say `<server>_<tool>`).
//
//   node server.mjs --dir RUN_DIR --port PORT [--host 127.0.0.1]
//
// It listens only once every agent is built and every downstream server listed, so a TCP
// connection (or `GET /`, 200) means ready. SIGTERM/SIGINT close the MCP clients and exit.
import http from "node:http";
import process from "node:process";

import { Agent, MCPConfiguration, VoltAgent, createTool } from "@voltagent/core";
import { MCPServer } from "@voltagent/mcp-server";

import { aiSdkModel, options, readDeployment } from "./deployment.mjs";

const { dir, port, host } = options();
const deployment = readDeployment(dir);
const { servers } = deployment;
const clients = [];

async function toolsFor(name, serverNames) {
  const wanted = Object.fromEntries(
    serverNames.filter((s) => servers[s]).map((s) => [
      s,
      {
        type: "streamable-http",
        url: servers[s].url,
        requestInit: { headers: servers[s].headers ?? {} },
        timeout: 60_000,
      },
    ]),
  );
  if (Object.keys(wanted).length === 0) return [];
  const client = new MCPConfiguration({ id: `agent-${name}`, servers: wanted });
  clients.push(client);
  const toolsets = await client.getToolsets();
  for (const s of Object.keys(wanted)) {
    if (!toolsets[s]) console.error(`agent ${name}: MCP server ${s}: no tools listed`);
  }
  const tools = [];
  for (const [s, set] of Object.entries(toolsets)) {
    for (const tool of set.getTools()) {
      // MCPConfiguration names a tool `<server>_<tool>`; the scenarios' model calls `<server>__<tool>`.
      const bare = tool.name.slice(s.length + 1);
      tools.push(
        createTool({
          name: `${s}__${bare}`,
          description: tool.description,
          parameters: tool.parameters,
          execute: tool.execute,
        }),
      );
    }
  }
  return tools;
}

const agents = {};
for (const { name, description, instruction, model, servers: names } of deployment.agents) {
  agents[name] = new Agent({
    id: name,
    name,
    purpose: description ?? `The ${name} agent.`,
    instructions: instruction,
    model: aiSdkModel(model, deployment),
    tools: await toolsFor(name, names),
  });
}

const mcp = new MCPServer({
  id: "pallas-kit-voltagent",
  name: "pallas-kit-voltagent",
  version: "1.0.0",
  // Only the Streamable HTTP endpoint below (no stdio, no SSE transport).
  protocols: { stdio: false, sse: false, http: true },
  agents,
});

const volt = new VoltAgent({ agents, mcpServers: { kit: mcp }, checkDependencies: false });
await volt.ready;

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", `http://${host}:${port}`);
  if (url.pathname === "/" && req.method === "GET") {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("ok\n");
    return;
  }
  try {
    await mcp.startHTTP({ url, httpPath: "/mcp", req, res });
  } catch (e) {
    console.error(`voltagent: MCP request failed: ${e?.message ?? e}`);
  }
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
  console.log(`voltagent: ${Object.keys(agents).length} agent(s) as agent_<id> on http://${host}:${port}/mcp`);
});
