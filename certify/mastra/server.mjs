// A Mastra deployment served over MCP Streamable HTTP, built from the files the conformance
// harness renders for a scenario (the same generators as the fast-agent profile; read here as
// plain data):
//
//   fastagent.config.yaml   default_model, openai/anthropic base_url, mcp.servers {name: {url, headers}}
//   fastagent.secrets.yaml  {openai: {api_key}, anthropic: {api_key}}
//   agents/<name>.md        front matter (name, description, model, servers) + instruction
//
// Every agent becomes a Mastra `Agent` whose model is the OpenAI (or Anthropic) AI SDK provider
// pointed at the mock LLM, with the tools of its downstream MCP servers from an `MCPClient`.
// One `MCPServer({agents})` serves them all; @mastra/mcp names each agent's tool `ask_<agent>`
// with the argument `{message}`. Tools reach the model as `<server>__<tool>` (the scenarios'
// `CALL_TOOL` directives use that name; MCPClient.listTools() would say `<server>_<tool>`).
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
import { Agent } from "@mastra/core/agent";
import { MCPClient, MCPServer } from "@mastra/mcp";
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
const cardDir = path.join(dir, "agents");
for (const file of fs.existsSync(cardDir) ? fs.readdirSync(cardDir).sort() : []) {
  if (!file.endsWith(".md")) continue;
  const { front, body } = readCard(path.join(cardDir, file));
  const name = String(front.name ?? path.basename(file, ".md"));
  agents[name] = new Agent({
    id: name,
    name,
    // MCPServer refuses an agent without a description.
    description: front.description ?? `The ${name} agent.`,
    instructions: body || "You are a helpful agent.",
    model: model(front.model),
    tools: await toolsFor(name, front.servers ?? []),
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
