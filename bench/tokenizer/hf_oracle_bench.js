// Measures Hugging Face tokenizers (npm @anush008/tokenizers, native Rust) encoding the
// benchmark corpus, for bench/tokenizer/run.sh. Usage:
//   node hf_oracle_bench.js tokenizer.json corpus.txt [batch]
// Prints one JSON line per mode: {"mode": ..., "tokens": N, "seconds": S,
// "tokens_per_s": R, "tokens_per_cpu_s": C} (C: per CPU-second of this process, steadier
// than wall time on a shared machine).
// Modes: "single" (the whole corpus in one encode call), "chunks" (sequential ~1 KB
// encode calls), and with "batch", "batch" (one encodeBatch over the chunks; parallel
// unless TOKENIZERS_PARALLELISM=false).
const fs = require("fs");
const { Tokenizer } = require("@anush008/tokenizers");

function chunks(s) {
  const out = [];
  let i = 0;
  const b = Buffer.from(s, "utf8");
  // Same cut points as the Go benchmark: ~1024 bytes, at the last space.
  while (i < b.length) {
    let n = Math.min(b.length - i, 1024);
    if (i + n < b.length) {
      const j = b.lastIndexOf(0x20, i + n - 1);
      if (j > i) n = j - i;
    }
    out.push(b.subarray(i, i + n).toString("utf8"));
    i += n;
  }
  return out;
}

async function main() {
  const [file, corpusFile, mode] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(file);
  tok.disableTruncation();
  tok.disablePadding();
  const text = fs.readFileSync(corpusFile, "utf8");
  const parts = chunks(text);
  let cpu0 = process.cpuUsage();
  const report = (m, tokens, sec) => {
    const c = process.cpuUsage(cpu0);
    const cpu = (c.user + c.system) / 1e6;
    console.log(JSON.stringify({ mode: m, tokens, seconds: sec, tokens_per_s: tokens / sec, tokens_per_cpu_s: tokens / cpu }));
  };
  // warm up
  await tok.encode(parts[0], null, { addSpecialTokens: false });
  if (mode === "batch") {
    cpu0 = process.cpuUsage();
    let t = process.hrtime.bigint();
    const encs = await tok.encodeBatch(parts, { addSpecialTokens: false });
    const sec = Number(process.hrtime.bigint() - t) / 1e9;
    report("batch", encs.reduce((a, e) => a + e.getLength(), 0), sec);
    return;
  }
  cpu0 = process.cpuUsage();
  let t = process.hrtime.bigint();
  const one = await tok.encode(text, null, { addSpecialTokens: false });
  report("single", one.getLength(), Number(process.hrtime.bigint() - t) / 1e9);
  cpu0 = process.cpuUsage();
  t = process.hrtime.bigint();
  let n = 0;
  for (const p of parts) n += (await tok.encode(p, null, { addSpecialTokens: false })).getLength();
  report("chunks", n, Number(process.hrtime.bigint() - t) / 1e9);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
