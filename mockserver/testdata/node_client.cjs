// Drives the perfgate mock server with the official OpenAI Node SDK and prints one JSON
// object with what the SDK returned: texts and the usage it reports. Usage:
//   node node_client.cjs BASE_URL API_KEY   (NODE_PATH must reach the "openai" package)
const OpenAI = require("openai");

async function main() {
const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const prompt = "Summarise the plot of a benchmark in one line.";
const out = {};

const chat = await client.chat.completions.create({
  model: "mock-model",
  messages: [{ role: "user", content: prompt }],
  max_completion_tokens: 21,
  ignore_eos: true,
});
out.chat = { text: chat.choices[0].message.content, usage: chat.usage, finish: chat.choices[0].finish_reason };

const stream = await client.chat.completions.create({
  model: "mock-model",
  messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
  max_tokens: 25,
  ignore_eos: true,
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let chunks = 0;
let usage = null;
for await (const c of stream) {
  if (c.choices.length > 0 && c.choices[0].delta.content) {
    text += c.choices[0].delta.content;
    chunks++;
  }
  if (c.usage) usage = c.usage;
}
out.chat_stream = { text, chunks, usage };

const comp = await client.completions.create({ model: "mock-model", prompt, max_tokens: 13, ignore_eos: true });
out.completion = { text: comp.choices[0].text, usage: comp.usage };

const cstream = await client.completions.create({ model: "mock-model", prompt, max_tokens: 11, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
text = "";
usage = null;
for await (const c of cstream) {
  if (c.choices.length > 0) text += c.choices[0].text;
  if (c.usage) usage = c.usage;
}
out.completion_stream = { text, usage };

const emb = await client.embeddings.create({ model: "mock-embed", input: [prompt, "two"] });
out.embeddings = { n: emb.data.length, dim: emb.data[0].embedding.length, usage: emb.usage };

const rs = await client.responses.create({ model: "mock-model", input: prompt, max_output_tokens: 7, stream: true, ignore_eos: true });
text = "";
usage = null;
const types = [];
for await (const ev of rs) {
  types.push(ev.type);
  if (ev.type === "response.output_text.delta") text += ev.delta;
  if (ev.type === "response.completed") usage = ev.response.usage;
}
out.responses_stream = { text, usage, types };

try {
  await new OpenAI({ baseURL, apiKey: "wrong", maxRetries: 0 }).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  out.wrong_key = { status: 0 };
} catch (e) {
  out.wrong_key = { status: e.status, type: e.type ?? e.error?.type };
}

process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
