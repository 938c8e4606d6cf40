package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/perfgate/perfgate/internal/jsonscan"
)

// Fast paths for the big parts of tokenizer.json (the vocabulary and the merges, often
// 10-30 MB): encoding/json validates and re-scans nested raw messages, which made loading
// Llama-3.1 take seconds. These readers handle the exact shapes tokenizer.json uses, on
// the scanning primitives of internal/jsonscan, and report malformed input as errors
// (callers fall back to encoding/json for its messages).

var errJSON = errors.New("malformed JSON")

// jsonFields splits a JSON object into its members (later duplicates win, as serde's
// last-value-wins is not guaranteed either; real files have none).
func jsonFields(data []byte) (map[string]json.RawMessage, error) {
	fields, _, err := jsonFieldsNest(data, "")
	return fields, err
}

// jsonFieldsNest is jsonFields that, in the same pass, also splits the member named
// nest when it is a well-formed object (nested is nil otherwise): a tokenizer.json's
// model is most of the file, and splitting it apart afterwards would scan it twice.
func jsonFieldsNest(data []byte, nest string) (fields, nested map[string]json.RawMessage, err error) {
	i := jsonscan.SkipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, errJSON
	}
	fields, end, err := objectFields(data, i, nest, &nested)
	if err != nil {
		return nil, nil, err
	}
	if jsonscan.SkipWS(data, end) != len(data) {
		return nil, nil, errJSON
	}
	return fields, nested, nil
}

// objectFields splits the object at data[i], returning the index after it; see
// jsonFieldsNest for nest.
func objectFields(data []byte, i int, nest string, nested *map[string]json.RawMessage) (map[string]json.RawMessage, int, error) {
	out := map[string]json.RawMessage{}
	end, err := jsonscan.Object(data, i, func(key, b []byte, j int) (int, error) {
		k, err := jsonKey(key)
		if err != nil {
			return 0, err
		}
		if nest != "" && k == nest {
			*nested = nil // a later duplicate that is no object clears an earlier one
			if m, e, err := objectFields(b, j, "", nil); err == nil {
				*nested, out[k] = m, json.RawMessage(b[j:e])
				return e, nil
			}
		}
		e, err := jsonscan.Skip(b, j)
		if err != nil {
			return 0, err
		}
		out[k] = json.RawMessage(b[j:e])
		return e, nil
	})
	return out, end, err
}

// jsonKey is an object key's raw bytes (between the quotes) as the string
// encoding/json reads.
func jsonKey(raw []byte) (string, error) {
	if jsonscan.Plain(raw) {
		return string(raw), nil
	}
	v, err := jsonscan.Decode(make([]byte, 0, len(raw)), raw)
	return string(v), err
}

// jsonStr decodes the JSON string at data[i] and returns the index after it.
func jsonStr(data []byte, i int) (string, int, error) {
	v, end, err := jsonscan.String(make([]byte, 0, 32), data, i)
	return string(v), end, err
}

// parseVocab reads {"token": id, ...}.
func parseVocab(raw json.RawMessage) (map[string]int, error) {
	m, err := parseVocabFast(raw)
	if err == nil {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// parseVocabFast walks the object itself, on the leaf's primitives, rather than with
// jsonscan.Object: a key is then read in one pass (a vocabulary has 100,000s of them).
func parseVocabFast(data []byte) (map[string]int, error) {
	i := jsonscan.SkipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errJSON
	}
	m := make(map[string]int, len(data)/16)
	i = jsonscan.SkipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, nil
	}
	for {
		var key string
		end, ok := jsonscan.PlainString(data, i)
		if ok {
			key = string(data[i+1 : end-1])
		} else {
			var err error
			if key, end, err = jsonStr(data, i); err != nil {
				return nil, err
			}
		}
		j := jsonscan.SkipWS(data, end)
		if j >= len(data) || data[j] != ':' {
			return nil, errJSON
		}
		id, k, ok := jsonscan.Int(data, j+1)
		if !ok {
			return nil, errJSON
		}
		m[key] = int(id)
		var closed bool
		var err error
		i, closed, err = jsonscan.Next(data, k, '}')
		switch {
		case err != nil:
			return nil, err
		case closed:
			return m, nil
		}
	}
}

// jsonStrView is jsonStr without a copy when the string at data[i] is plain: the result
// aliases data, so it must not outlive it (merges are only looked up while loading).
func jsonStrView(data []byte, i int) (string, int, error) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, errJSON
	}
	end, ok := jsonscan.PlainString(data, i)
	switch {
	case !ok:
		return jsonStr(data, i)
	case end == i+2:
		return "", end, nil
	}
	return unsafe.String(&data[i+1], end-i-2), end, nil
}

// parseMergesFast reads ["a b", ...] or [["a", "b"], ...]. It walks the array itself,
// as parseVocabFast does, with no call per merge but the strings' (there are 100,000s).
func parseMergesFast(data []byte) ([][2]string, bool, error) {
	i := jsonscan.SkipWS(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false, errJSON
	}
	out := make([][2]string, 0, len(data)/12)
	legacy := false
	i = jsonscan.SkipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return out, false, nil
	}
	for i < len(data) {
		var pair [2]string
		var err error
		switch data[i] {
		case '"':
			legacy = true
			pair[0], i, err = jsonStrView(data, i)
		case '[':
			pair[0], i, err = jsonStrView(data, jsonscan.SkipWS(data, i+1))
			if err == nil {
				i, err = mergeNext(data, i, false)
			}
			if err == nil {
				pair[1], i, err = jsonStrView(data, i)
			}
			if err == nil {
				i, err = mergeNext(data, i, true)
			}
		default:
			err = errJSON
		}
		if err != nil {
			return nil, false, err
		}
		out = append(out, pair)
		var closed bool
		i, closed, err = jsonscan.Next(data, i, ']')
		switch {
		case err != nil:
			return nil, false, err
		case closed:
			return out, legacy, nil
		}
	}
	return nil, false, errJSON
}

// mergeNext reads what follows the first (closing false) or second (true) string of
// a pair ["a", "b"]: a comma, then the closing bracket.
func mergeNext(b []byte, i int, closing bool) (int, error) {
	j, closed, err := jsonscan.Next(b, i, ']')
	if err != nil || closed != closing {
		return 0, errJSON
	}
	return j, nil
}

// unmarshalWithout decodes the small fields of an object into v, skipping the named big
// ones (encoding/json would validate and scan them again).
func unmarshalWithout(fields map[string]json.RawMessage, v any, skip ...string) error {
	small := make(map[string]json.RawMessage, len(fields))
	for k, f := range fields {
		small[k] = f
	}
	for _, k := range skip {
		delete(small, k)
	}
	b, err := json.Marshal(small)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w", err)
	}
	return nil
}
