// A scenario's deployment as the harness renders it for a runtime that reads no Pallas files, for
// the Node certifications (Mastra, VoltAgent); certify/python/deployment.py is its Python twin.
// The files are the same generators' as the fast-agent profile, read here as plain data:
//
//   fastagent.config.yaml   default_model, openai/anthropic base_url, mcp.servers {name: {url, headers}}
//   fastagent.secrets.yaml  {openai: {api_key}, anthropic: {api_key}}
//   agents/<name>.md        front matter (name, description, model, servers) + instruction
//
// Copied next to each certification's server.mjs and node_modules by certify/node/setup.sh.
import fs from "node:fs";
import path from "node:path";
import process from "node:process";

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import yaml from "js-yaml";

/** `--dir RUN_DIR --port PORT [--host HOST]` from the command line; a missing one exits 2. */
export function options() {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
    if (fallback === undefined) {
      console.error(`usage: node server.mjs --dir RUN_DIR --port PORT [--host HOST]; --${name} missing`);
      process.exit(2);
    }
    return fallback;
  };
  return { dir: arg("dir"), port: Number(arg("port")), host: arg("host", "127.0.0.1") };
}

function readYaml(file) {
  if (!fs.existsSync(file)) return {};
  return yaml.load(fs.readFileSync(file, "utf8")) ?? {};
}

function readCard(file) {
  const text = fs.readFileSync(file, "utf8");
  const m = /^---\n([\s\S]*?)\n?---\n?([\s\S]*)$/.exec(text);
  if (!m) return { front: {}, body: text.trim() };
  return { front: yaml.load(m[1]) ?? {}, body: m[2].trim() };
}

/**
 * The deployment rendered into `dir`: its config and secrets, the downstream MCP servers
 * (`{name: {url, headers}}`), and one card per agent, sorted by file name:
 * `{name, description, instruction, model, servers}`.
 */
export function readDeployment(dir) {
  const config = readYaml(path.join(dir, "fastagent.config.yaml"));
  const secrets = readYaml(path.join(dir, "fastagent.secrets.yaml"));
  const cardDir = path.join(dir, "agents");
  const agents = [];
  for (const file of fs.existsSync(cardDir) ? fs.readdirSync(cardDir).sort() : []) {
    if (!file.endsWith(".md")) continue;
    const { front, body } = readCard(path.join(cardDir, file));
    agents.push({
      name: String(front.name ?? path.basename(file, ".md")),
      description: front.description,
      instruction: body || "You are a helpful agent.",
      model: front.model,
      servers: front.servers ?? [],
    });
  }
  return { config, secrets, servers: config.mcp?.servers ?? {}, agents };
}

/** `provider.model` (fast-agent's model string, which the scenarios use) → an AI SDK model. */
export function aiSdkModel(spec, { config, secrets }) {
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
