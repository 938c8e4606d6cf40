// Oracle for Unicode normalization: stdin is a JSON array of strings; stdout is
// [[nfd...], [nfc...], [nfkc...], [nfkd...]] as Hugging Face's normalizers give them.
const tk = require("@anush008/tokenizers");
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = [tk.nfdNormalizer(), tk.nfcNormalizer(), tk.nfkcNormalizer(), tk.nfkdNormalizer()].map((n) =>
    texts.map((s) => n.normalizeString(s)));
  process.stdout.write(JSON.stringify(out));
});
