// Differential-test oracle: OpenAI's tiktoken (Rust, compiled to WASM; npm "tiktoken").
// Reads one JSON object on stdin: {"encoding": NAME, "texts": [...], "decode": [[ids]...]}
// and writes {"ids": [[...]...], "decoded": [...]}. Texts are encoded with
// allowed_special="all"; decoded bytes are turned into text by TextDecoder (U+FFFD for
// each maximal invalid subsequence, as Python's errors="replace").
const { get_encoding } = require("tiktoken");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const enc = get_encoding(req.encoding);
  const td = new TextDecoder("utf-8");
  const out = { ids: [], decoded: [] };
  for (const t of req.texts || []) out.ids.push(Array.from(enc.encode(t, "all")));
  for (const ids of req.decode || []) out.decoded.push(td.decode(enc.decode(Uint32Array.from(ids))));
  enc.free();
  process.stdout.write(JSON.stringify(out));
});
