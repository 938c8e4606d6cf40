package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONOptions are the arguments of transformers' tojson filter, which is Python's
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys).
type JSONOptions struct {
	Indent      *string // nil: single line; else the indent string ("" still breaks lines)
	ItemSep     string  // default ", " (or "," when Indent is set)
	KeySep      string  // default ": "
	SortKeys    bool
	EnsureASCII bool
}

func jsonOptsFrom(args []any, kw *Dict) JSONOptions {
	var o JSONOptions
	if v, ok := kw.Get("ensure_ascii"); ok {
		o.EnsureASCII = truthy(v)
	} else if len(args) > 0 {
		o.EnsureASCII = truthy(args[0])
	}
	ind := argN(args, kw, 1, "indent", nil)
	switch x := ind.(type) {
	case int:
		s := strings.Repeat(" ", max(x, 0))
		o.Indent = &s
	case string:
		o.Indent = &x
	}
	if sep, ok := unTuple(argN(args, kw, 2, "separators", nil)).([]any); ok && len(sep) == 2 {
		o.ItemSep, _ = sep[0].(string)
		o.KeySep, _ = sep[1].(string)
	}
	o.SortKeys = truthy(argN(args, kw, 3, "sort_keys", false))
	return o
}

// ToJSON formats v as Python's json.dumps does with the given options.
func ToJSON(v any, o JSONOptions) (string, error) {
	if o.ItemSep == "" && o.KeySep == "" {
		o.ItemSep, o.KeySep = ", ", ": "
		if o.Indent != nil {
			o.ItemSep = ","
		}
	}
	var b strings.Builder
	if err := writeJSON(&b, v, o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSONString(b *strings.Builder, s string, ascii bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 || ascii && c == 0x7f {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if ascii {
			if r >= 0x10000 {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
}

func jsonKey(k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case nil:
		return "null", nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return jsonFloat(x), nil
	}
	return "", errorf("keys must be str, int, float, bool or None, not %s", typeName(k))
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return formatFloat(f)
}

func writeJSON(b *strings.Builder, v any, o JSONOptions, depth int) error {
	if depth > maxReprDepth {
		return errorf("tojson: nesting too deep")
	}
	newline := func(d int) {
		if o.Indent != nil {
			b.WriteByte('\n')
			for range d {
				b.WriteString(*o.Indent)
			}
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		b.WriteString(jsonFloat(x))
	case string:
		writeJSONString(b, x, o.EnsureASCII)
	case Tuple:
		return writeJSON(b, []any(x), o, depth)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(o.ItemSep)
			}
			newline(depth + 1)
			if err := writeJSON(b, e, o, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte(']')
	case *Dict:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		order := make([]int, x.Len())
		keys := make([]string, x.Len())
		for i, k := range x.Keys() {
			order[i] = i
			s, err := jsonKey(k)
			if err != nil {
				return err
			}
			keys[i] = s
		}
		if o.SortKeys {
			sort.SliceStable(order, func(a, c int) bool { return keys[order[a]] < keys[order[c]] })
		}
		b.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				b.WriteString(o.ItemSep)
			}
			newline(depth + 1)
			writeJSONString(b, keys[i], o.EnsureASCII)
			b.WriteString(o.KeySep)
			if err := writeJSON(b, x.vals[i], o, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	default:
		if b.Len() > 64<<20 {
			return errorf("tojson: output too large")
		}
		return errorf("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

// ParseJSON decodes JSON into template values keeping object key order, as Python's
// json.loads: integers become int (float64 when out of int64 range), other numbers
// float64, objects *Dict, arrays []any.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("jinja: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > 1000 {
		return nil, fmt.Errorf("jinja: JSON nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		case '{':
			d := NewDict(4)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.Set(k, v)
			}
			_, err := dec.Token()
			return d, err
		}
		return nil, fmt.Errorf("jinja: unexpected %v in JSON", x)
	case json.Number:
		return numberValue(string(x)), nil
	}
	return t, nil // string, bool, nil
}

func numberValue(s string) any {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(i)
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// FromGo converts ordinary Go values to template values: maps become *Dict with keys
// sorted (Go maps have no order; use ParseJSON or *Dict to keep an order), slices become
// []any, json.RawMessage is parsed with ParseJSON, integer and float kinds become int and
// float64. Values that are already template values are returned as they are.
func FromGo(v any) (any, error) { return fromGo(v, 0) }

func fromGo(v any, depth int) (any, error) {
	if depth > 200 {
		return nil, fmt.Errorf("jinja: value nested too deeply")
	}
	switch x := v.(type) {
	case nil, bool, int, float64, string, *Dict, Undefined, Func, Tuple:
		return v, nil
	case json.RawMessage:
		return ParseJSON(x)
	case json.Number:
		return numberValue(string(x)), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = fromGo(e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := NewDict(len(keys))
		for _, k := range keys {
			e, err := fromGo(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			d.Set(k, e)
		}
		return d, nil
	case func(args []any, kwargs *Dict) (any, error):
		return Func(x), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, nil
		}
		return fromGo(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			var err error
			if out[i], err = fromGo(rv.Index(i).Interface(), depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		d := NewDict(len(keys))
		for _, k := range keys {
			e, err := fromGo(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			d.Set(k, e)
		}
		return d, nil
	}
	return nil, fmt.Errorf("jinja: cannot use %T as a template value", v)
}
