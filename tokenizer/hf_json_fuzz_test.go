package tokenizer

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/perfgate/perfgate/internal/jsonscan"
)

// FuzzTokenizerJSON holds the fast readers of tokenizer.json's big parts to the
// encoding/json fallback they stand in for, on the same bytes. Properties: a
// vocabulary parseVocabFast reads is encoding/json's map, and parseVocab (the fast path,
// then the fallback) reads exactly what encoding/json reads, errors included; merges
// parseMergesFast reads are encoding/json's pairs or lines; and an object encoding/json
// reads, jsonFields splits into the same members with the same raw values. Seeds: the shapes of real files, escapes (surrogates, bytes
// that are not UTF-8), numbers encoding/json refuses (01, 1.5, 1e3), text after the value.
func FuzzTokenizerJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":0,"Ġthe":1, "\u0120x" : 2 ,"\ud83d\ude00":3}`, `{}`, `{"a":01}`, `{"a":1.5}`, `{"a":1e3}`, `{"a":-0}`,
		"{\"\\n\xe2\x82\":4}", `{"a":9223372036854775807}`, `{"a":1,"a":2}`, `{"a":null}`, `{"a":"x"}`,
		`["a b","c d"]`, `[["a","b"],["\u00e9"," "]]`, `[]`, `[["a"]]`, `[["a","b","c"]]`, `["a b",["c","d"]]`,
		`{"model":{"vocab":{},"merges":[]},"version":"1.0"} `, `{"a":[1,{"b":"]"}]} x`, `{}0`,
		`{"model":{"a":1,"a":{"b":[]}},"model":{"c":2}}`, `{"model":null}`, `{"model":[1]}`, `{"model":{"a":1},"model":3}`, `{"model":`, `{"model":{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		_, _, _ = jsonFieldsNest(text, "model") // on any input, an error or fields: never a panic
		// The vocabulary and merges readers get one value, as jsonFields cuts it out.
		i := jsonscan.SkipWS(text, 0)
		end, err := jsonscan.Skip(text, i)
		if err != nil {
			return
		}
		b := text[i:end]
		var wantVocab map[string]int
		verr := json.Unmarshal(b, &wantVocab)
		if got, err := parseVocabFast(b); err == nil && (verr != nil || !maps.Equal(got, wantVocab)) {
			t.Fatalf("parseVocabFast(%q) = %v; encoding/json reads %v, %v", b, got, wantVocab, verr)
		}
		if got, err := parseVocab(b); (err == nil) != (verr == nil) || (err == nil && !maps.Equal(got, wantVocab)) {
			t.Fatalf("parseVocab(%q) = %v, %v; encoding/json reads %v, %v", b, got, err, wantVocab, verr)
		}

		// A fast reading is encoding/json's (a mix of the two shapes, which it refuses, is
		// not compared: parseMerges reads it as lines).
		if out, legacy, err := parseMergesFast(b); err == nil {
			var pairs [][2]string
			var lines []string
			if !legacy && (json.Unmarshal(b, &pairs) != nil || !slices.Equal(out, pairs)) {
				t.Fatalf("parseMergesFast(%q) = pairs %q; encoding/json reads %q", b, out, pairs)
			}
			if legacy && json.Unmarshal(b, &lines) == nil {
				got := make([]string, len(out))
				for i, p := range out {
					got[i] = p[0]
				}
				if !slices.Equal(got, lines) {
					t.Fatalf("parseMergesFast(%q) = lines %q; encoding/json reads %q", b, got, lines)
				}
			}
		}

		var wantFields map[string]json.RawMessage
		if json.Unmarshal(text, &wantFields) == nil && wantFields != nil {
			fields, err := jsonFields(text)
			if err != nil || !maps.EqualFunc(fields, wantFields, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Fatalf("jsonFields(%q) = %q, %v; encoding/json reads %q", text, fields, err, wantFields)
			}
			// Splitting the model in the same pass gives what splitting it after does.
			top, nested, err := jsonFieldsNest(text, "model")
			if err != nil || !maps.EqualFunc(top, fields, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Fatalf("jsonFieldsNest(%q) = %q, %v; jsonFields reads %q", text, top, err, fields)
			}
			var wantModel map[string]json.RawMessage
			if m, ok := fields["model"]; ok && json.Unmarshal(m, &wantModel) == nil && wantModel != nil {
				if !maps.EqualFunc(nested, wantModel, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
					t.Fatalf("jsonFieldsNest(%q) splits the model into %q; encoding/json reads %q", text, nested, wantModel)
				}
			} else if nested != nil {
				t.Fatalf("jsonFieldsNest(%q) splits a model that is not an object: %q", text, nested)
			}
		}
	})
}
