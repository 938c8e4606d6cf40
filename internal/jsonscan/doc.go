// Package jsonscan holds the JSON scanning primitives that perfgate's hand-written JSON
// readers share. Those readers are the stream chunk parser and the mock's fast request
// reader (internal/openai), the client recording decoder (record) and the tokenizer.json
// loader (tokenizer). Each keeps only its own keys and shapes; white space, strings,
// numbers, skipping a value and walking an object or an array are defined once, here.
//
//	end, err := jsonscan.Object(b, i, func(key, b []byte, j int) (int, error) {
//		if string(key) == "usage" {
//			return readUsage(b, j)
//		}
//		return jsonscan.Skip(b, j) // a member the reader does not read
//	})
//
// Two styles serve two kinds of reader. The index functions ([SkipWS], [ScanString],
// [String], [Int], [Skip], [Object], [Array]) read b from an index and return the index
// after what they read, with a [*SyntaxError] naming the offset of what was wrong.
// [Scanner] is for fast paths that hand anything unusual to encoding/json: its methods
// read a strict subset (plain strings, integers, literals) and report false at the
// first byte they do not expect.
//
// Strings follow encoding/json: escapes decoded (a UTF-16 surrogate pair as one rune, a
// lone surrogate as U+FFFD), each byte that is not UTF-8 read as U+FFFD, and an invalid
// escape an error. [ScanString] and [Skip] are lenient, as a reader of untrusted server
// bytes wants to be fast: they find where a value ends without validating scalars, and
// [Unescape] leaves control characters as they are; [String] and [Scanner] are strict.
//
// The package imports only the standard library. It does not decode into Go values by
// reflection, and it does not build a tree: callers read the members they want and skip
// the rest.
package jsonscan
