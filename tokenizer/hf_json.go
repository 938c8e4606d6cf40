package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Fast paths for the big parts of tokenizer.json (the vocabulary and the merges, often
// 10-30 MB): encoding/json validates and re-scans nested raw messages, which made loading
// Llama-3.1 take seconds. These scanners handle the exact shapes tokenizer.json uses and
// report malformed input as errors (callers fall back to encoding/json for its messages).

var errJSON = errors.New("malformed JSON")

func jsonSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// jsonSkip returns the index after the JSON value starting at data[i].
func jsonSkip(data []byte, i int) (int, error) {
	i = jsonSpace(data, i)
	if i >= len(data) {
		return 0, errJSON
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, errJSON
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				e, err := jsonSkip(data, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errJSON
	default:
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' && data[j] != ' ' && data[j] != '\n' && data[j] != '\r' && data[j] != '\t' {
			j++
		}
		if j == i {
			return 0, errJSON
		}
		return j, nil
	}
}

// jsonFields splits a JSON object into its members (later duplicates win, as serde's
// last-value-wins is not guaranteed either; real files have none).
func jsonFields(data []byte) (map[string]json.RawMessage, error) {
	i := jsonSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errJSON
	}
	out := map[string]json.RawMessage{}
	i = jsonSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return out, checkTrailing(data, i+1)
	}
	for {
		key, j, err := jsonStr(data, i)
		if err != nil {
			return nil, err
		}
		j = jsonSpace(data, j)
		if j >= len(data) || data[j] != ':' {
			return nil, errJSON
		}
		start := jsonSpace(data, j+1)
		end, err := jsonSkip(data, start)
		if err != nil {
			return nil, err
		}
		out[key] = json.RawMessage(data[start:end])
		i = jsonSpace(data, end)
		if i >= len(data) {
			return nil, errJSON
		}
		if data[i] == '}' {
			return out, checkTrailing(data, i+1)
		}
		if data[i] != ',' {
			return nil, errJSON
		}
		i = jsonSpace(data, i+1)
	}
}

func checkTrailing(data []byte, i int) error {
	if jsonSpace(data, i) != len(data) {
		return errJSON
	}
	return nil
}

// jsonString decodes the JSON string at data[i] (after spaces) and returns the index after it.
func jsonStr(data []byte, i int) (string, int, error) {
	i = jsonSpace(data, i)
	if i >= len(data) || data[i] != '"' {
		return "", 0, errJSON
	}
	i++
	start := i
	for i < len(data) {
		c := data[i]
		if c == '"' {
			s := data[start:i]
			if !utf8.Valid(s) {
				return string([]rune(string(s))), i + 1, nil // invalid bytes → U+FFFD, as encoding/json
			}
			return string(s), i + 1, nil
		}
		if c == '\\' {
			return jsonStringSlow(data, start)
		}
		if c < 0x20 {
			return "", 0, errJSON
		}
		i++
	}
	return "", 0, errJSON
}

func jsonStringSlow(data []byte, start int) (string, int, error) {
	buf := make([]byte, 0, 32)
	for i := start; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			return toValidUTF8(string(buf)), i + 1, nil
		case c < 0x20:
			return "", 0, errJSON
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(data) {
			return "", 0, errJSON
		}
		e := data[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(data, i)
			if !ok {
				return "", 0, errJSON
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(data, i+2); ok && i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						buf = utf8.AppendRune(buf, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", 0, errJSON
		}
	}
	return "", 0, errJSON
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
	return rune(v), err == nil
}

// jsonInt parses a JSON integer at data[i].
func jsonInt(data []byte, i int) (int, int, error) {
	i = jsonSpace(data, i)
	j := i
	if j < len(data) && data[j] == '-' {
		j++
	}
	n := 0
	d := j
	for j < len(data) && data[j] >= '0' && data[j] <= '9' {
		n = n*10 + int(data[j]-'0')
		j++
		if n > 1<<40 {
			return 0, 0, errJSON
		}
	}
	if j == d {
		return 0, 0, errJSON
	}
	if data[i] == '-' {
		n = -n
	}
	return n, j, nil
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

func parseVocabFast(data []byte) (map[string]int, error) {
	i := jsonSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errJSON
	}
	m := make(map[string]int, len(data)/16)
	i = jsonSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, nil
	}
	for {
		key, j, err := jsonStr(data, i)
		if err != nil {
			return nil, err
		}
		j = jsonSpace(data, j)
		if j >= len(data) || data[j] != ':' {
			return nil, errJSON
		}
		id, k, err := jsonInt(data, j+1)
		if err != nil {
			return nil, err
		}
		m[key] = id
		i = jsonSpace(data, k)
		if i >= len(data) {
			return nil, errJSON
		}
		if data[i] == '}' {
			return m, nil
		}
		if data[i] != ',' {
			return nil, errJSON
		}
		i++
	}
}

// jsonStrView is jsonStr without a copy when the string has no escapes: the result
// aliases data, so it must not outlive it (merges are only looked up while loading).
func jsonStrView(data []byte, i int) (string, int, error) {
	i = jsonSpace(data, i)
	if i >= len(data) || data[i] != '"' {
		return "", 0, errJSON
	}
	for j := i + 1; j < len(data); j++ {
		c := data[j]
		if c == '"' {
			if j == i+1 {
				return "", j + 1, nil
			}
			v := unsafe.String(&data[i+1], j-i-1)
			if !utf8.ValidString(v) {
				return jsonStr(data, i)
			}
			return v, j + 1, nil
		}
		if c == '\\' || c < 0x20 {
			return jsonStr(data, i)
		}
	}
	return "", 0, errJSON
}

// parseMergesFast reads ["a b", ...] or [["a", "b"], ...].
func parseMergesFast(data []byte) ([][2]string, bool, error) {
	i := jsonSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false, errJSON
	}
	out := make([][2]string, 0, len(data)/12)
	legacy := false
	i = jsonSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return out, false, nil
	}
	for {
		i = jsonSpace(data, i)
		if i >= len(data) {
			return nil, false, errJSON
		}
		if data[i] == '"' {
			s, j, err := jsonStrView(data, i)
			if err != nil {
				return nil, false, err
			}
			legacy = true
			out = append(out, [2]string{s, ""})
			i = j
		} else if data[i] == '[' {
			a, j, err := jsonStrView(data, i+1)
			if err != nil {
				return nil, false, err
			}
			j = jsonSpace(data, j)
			if j >= len(data) || data[j] != ',' {
				return nil, false, errJSON
			}
			b, k, err := jsonStrView(data, j+1)
			if err != nil {
				return nil, false, err
			}
			k = jsonSpace(data, k)
			if k >= len(data) || data[k] != ']' {
				return nil, false, errJSON
			}
			out = append(out, [2]string{a, b})
			i = k + 1
		} else {
			return nil, false, errJSON
		}
		i = jsonSpace(data, i)
		if i >= len(data) {
			return nil, false, errJSON
		}
		if data[i] == ']' {
			return out, legacy, nil
		}
		if data[i] != ',' {
			return nil, false, errJSON
		}
		i++
	}
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
