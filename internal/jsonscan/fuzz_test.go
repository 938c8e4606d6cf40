package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// FuzzString holds the string primitives to encoding/json on one JSON text whose first
// value may be a string. Properties: String accepts exactly the strings encoding/json
// accepts and decodes them to the same value; Unescape and, for a plain string,
// PlainString's bytes read as that value too; ScanString (lenient) ends where String
// ends; an accepted string never reads past the input.
func FuzzString(f *testing.F) {
	for _, s := range []string{`""`, `"abc"`, `"a\"b\\c\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`,
		`"\ud83d\u0041"`, "\"\xff\xe2\x82\"", "\"a\x01\"", `"\x"`, `"\u12g4"`, `"abc`, `"abc\"`, `"é" ,`, `x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, end, err := String(nil, b, 0)
		var want string
		// The string alone, as encoding/json reads it: b up to String's end when it
		// accepted, else up to where the lenient scan ends (or all of b).
		n := len(b)
		if err == nil {
			n = end
		} else if len(b) > 0 && b[0] == '"' {
			if e, _, ok := ScanString(b, 0); ok {
				n = e
			}
		}
		jerr := json.Unmarshal(b[:n], &want)
		if len(b) == 0 || b[0] != '"' {
			if err == nil {
				t.Fatalf("String(%q) accepted a value that is not a string", b)
			}
			return
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("String(%q) = %q, %v; encoding/json reads %q, %v", b[:n], got, err, want, jerr)
		}
		if err != nil {
			return
		}
		if end > len(b) || string(got) != want {
			t.Fatalf("String(%q) = %q, end %d; encoding/json reads %q", b, got, end, want)
		}
		if e, _, ok := ScanString(b, 0); !ok || e != end {
			t.Fatalf("ScanString(%q) = %d, %v; String ends at %d", b, e, ok, end)
		}
		if u, uerr := Unescape(nil, b[1:end-1]); uerr != nil || string(u) != want {
			t.Fatalf("Unescape(%q) = %q, %v; want %q", b[1:end-1], u, uerr, want)
		}
		if e, ok := PlainString(b, 0); ok && (e != end || string(b[1:e-1]) != want) {
			t.Fatalf("PlainString(%q) = %d: %q; encoding/json reads %q, ending at %d", b, e, b[1:e-1], want, end)
		}
	})
}

// FuzzSkip holds Skip and the walkers to encoding/json on JSON texts. Properties: on a
// text encoding/json accepts, Skip from the first value's first byte ends exactly at
// the value's end (only white space follows); Object visits the keys encoding/json
// decodes, in order, and Array as many elements; on any input they never panic or end
// past the input.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":"]}"}],"c\"":null}`, ` [1, "x", true, {"y": [ ]} ] `, `"s"`, `123`, `-1.5e3`,
		`{"a":1,}`, `[1,2`, `{"a" 1}`, `[[[[[[]]]]]]`, `{"a\u0062":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		i := SkipWS(b, 0)
		end, err := Skip(b, i)
		if err == nil && (end <= i || end > len(b)) {
			t.Fatalf("Skip(%q, %d) = %d: outside the input", b, i, end)
		}
		if json.Valid(b) {
			if err != nil || SkipWS(b, end) != len(b) {
				t.Fatalf("Skip(%q, %d) = %d, %v; want the end of the value (only white space after)", b, i, end, err)
			}
		}
		if i >= len(b) {
			return
		}
		switch b[i] {
		case '{':
			var keys []string
			oend, oerr := Object(b, i, func(key, b []byte, j int) (int, error) {
				k, err := Decode(nil, key)
				keys = append(keys, string(k))
				if err != nil {
					return 0, err
				}
				return Skip(b, j)
			})
			if oerr == nil && (oend > len(b) || oend <= i) {
				t.Fatalf("Object(%q) = %d: outside the input", b, oend)
			}
			if want, ok := jsonKeys(b); ok && (oerr != nil || oend != end || !equal(keys, want)) {
				t.Fatalf("Object(%q) = %d, %v, keys %q; encoding/json reads keys %q, Skip ends at %d", b, oend, oerr, keys, want, end)
			}
		case '[':
			n := 0
			aend, aerr := Array(b, i, func(b []byte, j int) (int, error) { n++; return Skip(b, j) })
			if aerr == nil && (aend > len(b) || aend <= i) {
				t.Fatalf("Array(%q) = %d: outside the input", b, aend)
			}
			var want []json.RawMessage
			if json.Unmarshal(b, &want) == nil && (aerr != nil || aend != end || n != len(want)) {
				t.Fatalf("Array(%q) = %d, %v, %d elements; encoding/json reads %d, Skip ends at %d", b, aend, aerr, n, len(want), end)
			}
		}
	})
}

// jsonKeys returns the keys of the object b, in order, as encoding/json decodes them;
// ok is false when encoding/json does not accept b.
func jsonKeys(b []byte) (keys []string, ok bool) {
	if !json.Valid(b) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
	}
	return keys, true
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzNumber holds the number primitives to encoding/json and strconv. Properties:
// Number spans the whole text exactly when it is a JSON number; Int does exactly when
// it is a JSON integer (after white space) that encoding/json reads into an int64,
// with the same value, ending where Number ends;
// Atoi agrees with strconv.Atoi.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "-17", "1.5", "1e3", "-1.5E-3", "01", "+1", "-", "1.", ".5",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999", "1x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// A bare number: not null, true or a string, and no white space around it, which
		// encoding/json allows (Int skips it before the number: isInt).
		number := func(i int) bool {
			return i < len(b) && (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) && SkipWS(b, len(b)-1) == len(b)-1
		}
		isNum, isInt := number(0), number(SkipWS(b, 0))
		end, ok := Number(b, 0)
		if whole := ok && end == len(b); whole != (isNum && json.Valid(b)) {
			t.Fatalf("Number(%q) = %d, %v; json.Valid = %v", b, end, ok, json.Valid(b))
		}
		n, iend, iok := Int(b, 0)
		var want int64
		werr := json.Unmarshal(b, &want)
		if whole := iok && iend == len(b); whole != (isInt && werr == nil) || (whole && n != want) {
			t.Fatalf("Int(%q) = %d, %d, %v; encoding/json: %d, %v", b, n, iend, iok, want, werr)
		}
		if iok && isNum && (iend > len(b) || !ok || iend != end) {
			t.Fatalf("Int(%q) ends at %d, Number at %d (%v)", b, iend, end, ok)
		}
		a, aok := Atoi(b)
		sa, serr := strconv.Atoi(string(b))
		if aok != (serr == nil) || a != sa {
			t.Fatalf("Atoi(%q) = %d, %v; strconv.Atoi: %d, %v", b, a, aok, sa, serr)
		}
	})
}
