// Differential-test oracle: OpenAI's tiktoken (Rust, compiled to WASM; npm "tiktoken").
// Reads one JSON object on stdin: {"encoding": NAME, "texts": [...], "decode": [[ids]...]},
// or instead of "encoding" a tiktoken file: "file": PATH, "special_tokens": {TEXT: ID},
// "pat_str": PATTERN; and writes {"ids": [[...]...], "decoded": [...]}. Texts are encoded with
// allowed_special="all"; decoded bytes are turned into text by TextDecoder (U+FFFD for
// each maximal invalid subsequence, as Python's errors="replace").
const { get_encoding, Tiktoken } = require("tiktoken");
const fs = require("fs");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const enc = req.file
    ? new Tiktoken(fs.readFileSync(req.file, "utf8"), req.special_tokens, req.pat_str)
    : get_encoding(req.encoding);
  const td = new TextDecoder("utf-8");
  const out = { ids: [], decoded: [] };
  for (const t of req.texts || []) out.ids.push(Array.from(enc.encode(t, "all")));
  for (const ids of req.decode || []) out.decoded.push(td.decode(enc.decode(Uint32Array.from(ids))));
  enc.free();
  process.stdout.write(JSON.stringify(out));
});
