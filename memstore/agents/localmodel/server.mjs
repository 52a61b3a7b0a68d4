// memstore's loopback model server: an OpenAI-compatible /v1/chat/completions over a local GGUF
// model (node-llama-cpp, prebuilt binaries, CPU). Every reply with tools is one tool call,
// constrained by grammars made from the tool schemas: the tool's name first, then its
// arguments (string, number, boolean and enum fields, and lists of strings: nested objects
// are flattened out, which keeps a grammar fast on two cores). Greedy decoding: the same
// request gives the same reply. One request at a time.
//
//   node server.mjs MODEL.gguf PORT NODE_MODULES  (prints "ready PORT" when it listens on 127.0.0.1;
//   NODE_MODULES holds node-llama-cpp; the server ends when its standard input closes)
import http from "node:http";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [, , modelPath, portArg, modules] = process.argv;
const {getLlama, LlamaCompletion} = await import(pathToFileURL(path.join(modules, "node-llama-cpp", "dist", "index.js")).href);
const CONTEXT = 8192;
const PROMPT_BUDGET = CONTEXT - 600; // tokens of prompt at most: room left for the reply
const llama = await getLlama({build: "never", gpu: false});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: CONTEXT, threads: 2});
const sequence = context.getSequence();
const completion = new LlamaCompletion({contextSequence: sequence});
const grammars = new Map();
let queue = Promise.resolve();
let calls = 0;

async function grammarFor(schema) {
  const key = JSON.stringify(schema);
  if (!grammars.has(key)) grammars.set(key, await llama.createGrammarForJsonSchema(schema));
  return grammars.get(key);
}

function flat(schema) {
  // A tool's parameters as a flat object schema the grammar decodes quickly.
  const properties = {};
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    const kind = field.type ?? (field.anyOf ? "string" : undefined);
    if (field.enum) properties[name] = {enum: field.enum};
    else if (kind === "string") properties[name] = {type: "string", maxLength: 300};
    else if (kind === "boolean" || kind === "integer" || kind === "number") properties[name] = {type: kind};
    else if (kind === "array") properties[name] = {type: "array", items: {type: "string"}, maxItems: 4};
  }
  const required = (schema?.required ?? []).filter((name) => name in properties);
  return {type: "object", properties, required};
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => part.text ?? "").join("");
  return content == null ? "" : JSON.stringify(content);
}

function turns(messages) {
  return messages.map((m) => {
    if (m.role === "tool") return {role: "user", text: `Result of ${m.name ?? "the tool"}:\n${text(m.content)}`};
    if (m.role === "assistant" && m.tool_calls?.length) {
      const said = m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join("\n");
      return {role: "assistant", text: said};
    }
    return {role: m.role === "system" ? "system" : m.role === "assistant" ? "assistant" : "user", text: text(m.content)};
  });
}

function chatml(all) {
  return all.map((t) => `<|im_start|>${t.role}\n${t.text}<|im_end|>\n`).join("") + "<|im_start|>assistant\n";
}

function prompt(messages, tools) {
  // The system prompt (with the tools), the first task message, and as many of the latest
  // turns as fit the budget; a long turn is cut in its middle.
  const listed = (tools ?? []).map((t) => `- ${t.function.name}: ${t.function.description ?? ""}`).join("\n");
  let all = turns(messages).map((t) => ({...t, text: t.text.length > 6000 ? `${t.text.slice(0, 3000)}\n[...]\n${t.text.slice(-2000)}` : t.text}));
  if (listed) {
    const system = all.findIndex((t) => t.role === "system");
    const tooling = `Call one tool at a time. Tools:\n${listed}`;
    if (system >= 0) all[system] = {...all[system], text: `${all[system].text}\n\n${tooling}`};
    else all = [{role: "system", text: tooling}, ...all];
  }
  const head = all.slice(0, 2);
  let tail = all.slice(2);
  let made = chatml([...head, ...tail]);
  while (tail.length > 1 && model.tokenize(made).length > PROMPT_BUDGET) {
    tail = tail.slice(2);
    made = chatml([...head, {role: "user", text: "[earlier turns left out]"}, ...tail]);
  }
  return made;
}

async function generate(text, options) {
  const tokens = model.tokenize(text);
  const out = await completion.generateCompletion(tokens.length > PROMPT_BUDGET ? model.detokenize(tokens.slice(-PROMPT_BUDGET)) : text, {temperature: 0, ...options});
  return {out, promptTokens: Math.min(tokens.length, PROMPT_BUDGET), outputTokens: model.tokenize(out).length};
}

async function answer(request) {
  const tools = request.tools ?? [];
  const base = prompt(request.messages ?? [], tools);
  const created = Math.floor(Date.now() / 1000);
  const reply = (message, finish, usage) => ({
    id: `chatcmpl-${++calls}`, object: "chat.completion", created, model: request.model ?? "local",
    choices: [{index: 0, message, finish_reason: finish}],
    usage: {prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1]},
  });
  if (!tools.length) {
    const said = await generate(base, {maxTokens: Math.min(request.max_tokens ?? 256, 512)});
    return reply({role: "assistant", content: said.out}, "stop", [said.promptTokens, said.outputTokens]);
  }
  const names = tools.map((t) => t.function.name);
  const chose = await generate(base, {grammar: await grammarFor({type: "object", properties: {tool: {enum: names}}, required: ["tool"]}), maxTokens: 40});
  const name = JSON.parse(chose.out).tool;
  const tool = tools.find((t) => t.function.name === name);
  const args = await generate(`${base}${name} with `, {grammar: await grammarFor(flat(tool.function.parameters)), maxTokens: 300});
  let parsed;
  try {
    parsed = JSON.parse(args.out);
  } catch {
    parsed = {}; // cut at the token limit: an empty call, which the tool refuses in words
  }
  const call = {id: `call_${calls + 1}`, type: "function", function: {name, arguments: JSON.stringify(parsed)}};
  const usage = [chose.promptTokens + args.promptTokens, chose.outputTokens + args.outputTokens];
  return reply({role: "assistant", content: null, tool_calls: [call]}, "tool_calls", usage);
}

const server = http.createServer((req, res) => {
  const send = (status, body) => {
    res.writeHead(status, {"content-type": "application/json"});
    res.end(JSON.stringify(body));
  };
  if (req.method === "GET" && req.url.endsWith("/models")) {
    return send(200, {object: "list", data: [{id: "local", object: "model", owned_by: "memstore"}]});
  }
  if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) return send(404, {error: {message: "not found"}});
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    queue = queue.then(async () => {
      try {
        send(200, await answer(JSON.parse(body)));
      } catch (error) {
        send(500, {error: {message: String(error?.message ?? error)}});
      }
    });
  });
});
server.listen(Number(portArg ?? 0), "127.0.0.1", () => {
  process.stdout.write(`ready ${server.address().port}\n`);
});
process.stdin.on("end", () => process.exit(0)); // the parent went away
process.stdin.resume();
