// A VoltAgent deployment served over MCP Streamable HTTP, built from the files the conformance
// harness renders for a scenario (the same generators as the fast-agent profile; read here as
// plain data):
//
//   fastagent.config.yaml   default_model, openai/anthropic base_url, mcp.servers {name: {url, headers}}
//   fastagent.secrets.yaml  {openai: {api_key}, anthropic: {api_key}}
//   agents/<name>.md        front matter (name, description, model, servers) + instruction
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
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import process from "node:process";

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, MCPConfiguration, VoltAgent, createTool } from "@voltagent/core";
import { MCPServer } from "@voltagent/mcp-server";
import yaml from "js-yaml";

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (fallback === undefined) {
    console.error(`usage: node server.mjs --dir RUN_DIR --port PORT [--host HOST]; --${name} missing`);
    process.exit(2);
  }
  return fallback;
}

const dir = arg("dir");
const port = Number(arg("port"));
const host = arg("host", "127.0.0.1");

function readYaml(file) {
  const p = path.join(dir, file);
  if (!fs.existsSync(p)) return {};
  return yaml.load(fs.readFileSync(p, "utf8")) ?? {};
}

function readCard(file) {
  const text = fs.readFileSync(file, "utf8");
  const m = /^---\n([\s\S]*?)\n?---\n?([\s\S]*)$/.exec(text);
  if (!m) return { front: {}, body: text.trim() };
  return { front: yaml.load(m[1]) ?? {}, body: m[2].trim() };
}

const config = readYaml("fastagent.config.yaml");
const secrets = readYaml("fastagent.secrets.yaml");

// `provider.model` (fast-agent's model string, which the scenarios use) → an AI SDK model.
function model(spec) {
  const text = String(spec ?? config.default_model ?? "openai.mock-model");
  const dot = text.indexOf(".");
  const provider = dot > 0 ? text.slice(0, dot) : "openai";
  const id = dot > 0 ? text.slice(dot + 1) : text;
  const key = (p) => secrets[p]?.api_key ?? process.env[`${p.toUpperCase()}_API_KEY`];
  if (provider === "anthropic") {
    return createAnthropic({ baseURL: config.anthropic?.base_url ? `${config.anthropic.base_url.replace(/\/$/, "")}/v1` : undefined, apiKey: key("anthropic") })(id);
  }
  // Chat Completions, the OpenAI-compatible API (the Responses API is OpenAI's own).
  return createOpenAI({ baseURL: config.openai?.base_url, apiKey: key("openai") }).chat(id);
}

const servers = config.mcp?.servers ?? {};
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
const cardDir = path.join(dir, "agents");
for (const file of fs.existsSync(cardDir) ? fs.readdirSync(cardDir).sort() : []) {
  if (!file.endsWith(".md")) continue;
  const { front, body } = readCard(path.join(cardDir, file));
  const name = String(front.name ?? path.basename(file, ".md"));
  agents[name] = new Agent({
    id: name,
    name,
    purpose: front.description ?? `The ${name} agent.`,
    instructions: body || "You are a helpful agent.",
    model: model(front.model),
    tools: await toolsFor(name, front.servers ?? []),
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
