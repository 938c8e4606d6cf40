// Oracle for the tokenizer package's differential tests: Hugging Face's Rust `tokenizers`
// (npm @anush008/tokenizers, a native build of tokenizers 0.22).
//
// stdin: one JSON object
//   {"file": "path/to/tokenizer.json",          // or "json": "<tokenizer.json text>"
//    "texts": ["<base64 of UTF-8 bytes>", ...],  // encoded with and without special tokens
//    "decode": [[ids...], ...]}                  // decoded with skip_special_tokens false and true
// stdout: {"vocab_size": N, "base_vocab_size": N, "enc": [[...]], "enc_special": [[...]],
//          "dec": ["..."], "dec_skip": ["..."]}
//
// Texts travel as base64 bytes because JSON strings cannot carry invalid UTF-8; they are
// decoded with Buffer.toString("utf8"), whose U+FFFD substitution (WHATWG, "maximal
// subpart") is what Rust's String::from_utf8_lossy does.
const { Tokenizer } = require("@anush008/tokenizers");

async function main() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const tok = req.file ? Tokenizer.fromFile(req.file) : Tokenizer.fromString(req.json);
  tok.disableTruncation();
  tok.disablePadding();
  const texts = (req.texts || []).map((b) => Buffer.from(b, "base64").toString("utf8"));
  const out = { vocab_size: tok.getVocabSize(true), base_vocab_size: tok.getVocabSize(false), enc: [], enc_special: [], dec: [], dec_skip: [] };
  const batch = 256;
  for (let i = 0; i < texts.length; i += batch) {
    const part = texts.slice(i, i + batch);
    const a = await tok.encodeBatch(part, { addSpecialTokens: false });
    const b = await tok.encodeBatch(part, { addSpecialTokens: true });
    for (const e of a) out.enc.push(e.getIds());
    for (const e of b) out.enc_special.push(e.getIds());
  }
  for (const ids of req.decode || []) {
    out.dec.push(await tok.decode(ids, false));
    out.dec_skip.push(await tok.decode(ids, true));
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
