// Extracts, from Hugging Face's Rust tokenizers (npm @anush008/tokenizers), which code
// points each character class contains as the library sees them: Oniguruma's \p{..} and
// \s in Split regexes, and the Rust/unicode_categories predicates behind BertNormalizer,
// BertPreTokenizer, Punctuation, WhitespaceSplit, Digits, StripAccents and Lowercase.
// Output: JSON {class: [[lo, hi], ...]} on stdout. Used by `go test -run
// TestGenerateUnicodeTables -gen-unicode` to write unicode_tables.go.
const tk = require("@anush008/tokenizers");

const all = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (c >= 0xd800 && c <= 0xdfff) continue;
  all.push(c);
}
const str = (cps) => cps.map((c) => String.fromCodePoint(c)).join("");

function ranges(set) {
  const cps = [...new Set(set)].sort((a, b) => a - b);
  const out = [];
  for (const c of cps) {
    if (out.length && out[out.length - 1][1] === c - 1) out[out.length - 1][1] = c;
    else out.push([c, c]);
  }
  return out;
}

// removedBy returns the code points a pre-tokenizer drops (behavior Removed).
function removedBy(pre) {
  const kept = new Set();
  const chunk = 65536;
  for (let i = 0; i < all.length; i += chunk) {
    const part = all.slice(i, i + chunk);
    for (const [s] of pre.preTokenizeString(str(part))) for (const ch of s) kept.add(ch.codePointAt(0));
  }
  return all.filter((c) => !kept.has(c));
}

const out = {};
const only = process.argv[2];
// splitPreTokenizer takes a literal; a Split with a Regex pattern comes from tokenizer.json.
function regexSplit(re) {
  const json = {
    version: "1.0", added_tokens: [], normalizer: null, post_processor: null, decoder: null,
    pre_tokenizer: { type: "Split", pattern: { Regex: re }, behavior: "Removed", invert: false },
    model: { type: "WordLevel", vocab: { "<unk>": 0 }, unk_token: "<unk>" },
  };
  return tk.Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
}
for (const cls of ["L", "N", "P", "S", "M", "Lu", "Ll", "Lt", "Lm", "Lo", "Nd"]) {
  out["onig_" + cls] = ranges(removedBy(regexSplit("\\p{" + cls + "}")));
}
out["onig_s"] = ranges(removedBy(regexSplit("\\s")));
out["rust_whitespace"] = ranges(removedBy(tk.whitespaceSplitPreTokenizer()));
// Rust regex \w (Whitespace pre-tokenizer, added tokens' single_word): with every
// character between two "a"s, a non-word character comes out as a piece of its own.
{
  const nonWord = new Set();
  const pre = tk.whitespacePreTokenizer();
  const chunk = 32768;
  for (let i = 0; i < all.length; i += chunk) {
    const part = all.slice(i, i + chunk).filter((c) => c !== 0x61);
    const s = "a" + part.map((c) => String.fromCodePoint(c)).join("a") + "a";
    for (const [p] of pre.preTokenizeString(s)) if (!p.includes("a")) for (const ch of p) nonWord.add(ch.codePointAt(0));
  }
  const space = new Set(removedBy(tk.whitespaceSplitPreTokenizer()));
  out["rust_word"] = ranges(all.filter((c) => !space.has(c) && (c === 0x61 || !nonWord.has(c))));
}
out["bert_punct"] = ranges(removedBy(tk.punctuationPreTokenizer("removed")));

// Per-character normalizer results, joined with a separator the normalizers keep.
function perChar(norm, sep) {
  const res = new Map();
  const chunk = 32768;
  for (let i = 0; i < all.length; i += chunk) {
    const part = all.slice(i, i + chunk).filter((c) => c !== sep.codePointAt(0));
    const got = norm.normalizeString(part.map((c) => sep + String.fromCodePoint(c)).join("") + sep).split(sep);
    // got[0] is "" and got[k+1] is the result for part[k]
    if (got.length !== part.length + 2) throw new Error("separator not preserved");
    part.forEach((c, k) => res.set(c, got[k + 1]));
  }
  return res;
}
const clean = perChar(tk.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: false }), "a");
out["bert_removed"] = ranges(all.filter((c) => clean.get(c) === ""));
out["bert_to_space"] = ranges(all.filter((c) => c !== 0x20 && clean.get(c) === " "));
// Canonical combining class 0 as the normalizers see it: in "a\u0301 c \u0316" the two
// marks (classes 230, 220) are reordered unless c, between them, is a starter.
{
  const nfd = tk.nfdNormalizer();
  const res = new Map();
  const sep = "\u0001";
  const chunk = 32768;
  for (let i = 0; i < all.length; i += chunk) {
    const part = all.slice(i, i + chunk).filter((c) => c !== 1);
    const got = nfd.normalizeString(part.map((c) => sep + "a\u0301" + String.fromCodePoint(c) + "\u0316").join("") + sep).split(sep);
    if (got.length !== part.length + 2) throw new Error("separator not preserved");
    part.forEach((c, k) => res.set(c, got[k + 1] === "a\u0301" + String.fromCodePoint(c) + "\u0316"));
  }
  out["nfd_starter"] = ranges(all.filter((c) => res.get(c)));
}
// Per-character NFD and NFKD as Hugging Face's (older) tables give them: [c, result] for
// every character they change.
for (const [name, n] of [["nfd_map", tk.nfdNormalizer()], ["nfkd_map", tk.nfkdNormalizer()]]) {
  const m = perChar(n, "\u0001");
  out[name] = all.filter((c) => c !== 1 && m.get(c) !== String.fromCodePoint(c)).map((c) => [c, m.get(c)]);
}
const bertStrip = perChar(tk.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false }), "\u0001");
out["bert_mn"] = ranges(all.filter((c) => bertStrip.get(c) === ""));
const strip = perChar(tk.stripAccentsNormalizer(), "a");
out["combining_mark"] = ranges(all.filter((c) => strip.get(c) === ""));
const lower = perChar(tk.lowercase(), "\u0001");
const lowerMap = [];
for (const c of all) {
  if (c === 1) continue;
  const l = lower.get(c);
  if (l !== String.fromCodePoint(c)) lowerMap.push([c, [...l].map((x) => x.codePointAt(0))]);
}
out["lower_map"] = lowerMap;

// Numeric (char::is_numeric): with individual_digits each numeric character is its own
// piece; separating every character by "x" makes the others merge with their neighbours.
{
  const numeric = new Set();
  const pre = tk.digitsPreTokenizer(true);
  const chunk = 32768;
  for (let i = 0; i < all.length; i += chunk) {
    const part = all.slice(i, i + chunk).filter((c) => c !== 0x78);
    const s = "x" + part.map((c) => String.fromCodePoint(c)).join("x") + "x";
    for (const [p] of pre.preTokenizeString(s)) {
      const cps = [...p];
      if (cps.length === 1 && p !== "x") numeric.add(cps[0].codePointAt(0));
    }
  }
  out["rust_numeric"] = ranges(numeric);
}
process.stdout.write(JSON.stringify(out));
