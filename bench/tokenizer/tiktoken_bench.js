// Peer benchmark: OpenAI's tiktoken (npm, Rust compiled to WASM) encoding the corpus that
// BenchmarkBuiltinEncode writes (a JSON array of documents), single-threaded.
// Usage: node tiktoken_bench.js CORPUS.json [encoding ...]
// Prints "NAME TOKENS_PER_S TOKENS_PER_CPU_S" per encoding.
const { get_encoding } = require("tiktoken");
const fs = require("fs");

const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const names = process.argv.length > 3 ? process.argv.slice(3) : ["gpt2", "cl100k_base", "o200k_base"];
for (const name of names) {
  const enc = get_encoding(name);
  let tokens = 0;
  for (const d of docs) tokens += enc.encode(d, "all").length; // warm-up
  const rounds = 2;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (const d of docs) enc.encode(d, "all");
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  console.log(`${name} ${Math.round((tokens * rounds) / secs)} ${Math.round((tokens * rounds) / cpu)}`);
  enc.free();
}
