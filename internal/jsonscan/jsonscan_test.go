package jsonscan

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestString: strings decode as encoding/json decodes them (escapes, surrogate pairs,
// lone surrogates, bytes that are not UTF-8), and each malformed string is an error
// naming what is wrong and its offset.
func TestString(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      string // "" = no error
	}{
		{in: `""`, want: ""},
		{in: `"plain"`, want: "plain"},
		{in: `"a\"b\\c\/d\b\f\n\r\t"`, want: "a\"b\\c/d\b\f\n\r\t"},
		{in: `"\u00e9\u20AC"`, want: "é€"},
		{in: `"\ud83d\ude00"`, want: "😀"},                         // a surrogate pair is one rune
		{in: `"\ud83d"`, want: "\uFFFD"},                          // a lone high surrogate
		{in: `"\ud83dx"`, want: "\uFFFDx"},                        // not followed by an escape
		{in: `"\ude00\ud83d"`, want: "\uFFFD\uFFFD"},              // low then high: two lone ones
		{in: `"\ud83d\u0041"`, want: "\uFFFDA"},                   // high then not a low one
		{in: "\"\xff\"", want: "\uFFFD"},                          // not UTF-8: U+FFFD per byte
		{in: "\"\xe2\x82\"", want: "\uFFFD\uFFFD"},                // a truncated sequence, per byte as encoding/json
		{in: "\"\\n\xe2\x82\"", want: "\n\uFFFD\uFFFD"},           // the same with an escape before it
		{in: "\"\x7f\"", want: "\x7f"},                            // DEL is not a control character for JSON
		{in: `"\x"`, err: "jsonscan: invalid escape at offset 1"}, // the backslash's offset
		{in: `"ab\u12g4"`, err: `jsonscan: invalid \u escape at offset 3`},
		{in: `"\u12"`, err: `jsonscan: invalid \u escape at offset 1`},
		{in: "\"a\x01\"", err: "jsonscan: control character in string at offset 2"},
		{in: `"abc`, err: "jsonscan: unterminated string at offset 0"},
		{in: `"abc\"`, err: "jsonscan: unterminated string at offset 0"},
		{in: `abc`, err: "jsonscan: want a string at offset 0"},
	} {
		got, end, err := String(nil, []byte(tc.in), 0)
		var want string
		jerr := json.Unmarshal([]byte(tc.in), &want)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("String(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			if jerr == nil {
				t.Errorf("String(%q): encoding/json reads it as %q; the case is wrong", tc.in, want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("String(%q) error %T, want *SyntaxError", tc.in, err)
			}
		case err != nil || string(got) != tc.want || end != len(tc.in):
			t.Errorf("String(%q) = %q, %d, %v; want %q, %d", tc.in, got, end, err, tc.want, len(tc.in))
		case jerr != nil || want != tc.want:
			t.Errorf("String(%q): encoding/json reads %q, %v; the case wants %q", tc.in, want, jerr, tc.want)
		}
	}
}

// TestUnescapeLenient: Unescape (the stream parser's) copies control characters,
// which Decode (encoding/json's reading) refuses.
func TestUnescapeLenient(t *testing.T) {
	raw := []byte("a\x01\\n")
	if got, err := Unescape(nil, raw); err != nil || string(got) != "a\x01\n" {
		t.Errorf("Unescape(%q) = %q, %v; want %q", raw, got, err, "a\x01\n")
	}
	if _, err := Decode(nil, raw); err == nil || err.Error() != "jsonscan: control character in string at offset 1" {
		t.Errorf("Decode(%q) error = %v, want the control character at offset 1", raw, err)
	}
	if _, err := Unescape(nil, []byte(`ab\`)); err == nil || err.Error() != "jsonscan: backslash at the end of a string at offset 2" {
		t.Errorf(`Unescape("ab\\") error = %v, want the backslash at offset 2`, err)
	}
}

// TestPlain: a plain string is one that reads as its own bytes.
func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		in    string
		plain bool
	}{
		{`"abc"`, true}, {`""`, true}, {`"é"`, true}, {`"a\nb"`, false}, {"\"a\x1fb\"", false},
		{"\"\xff\"", false}, {`"abc`, false}, {`abc"`, false}, {``, false},
	} {
		end, ok := PlainString([]byte(tc.in), 0)
		if ok != tc.plain || (ok && end != len(tc.in)) {
			t.Errorf("PlainString(%q) = %d, %v; want %d, %v", tc.in, end, ok, len(tc.in), tc.plain)
		}
		if n := len(tc.in); n >= 2 && tc.in[0] == '"' && tc.in[n-1] == '"' && Plain([]byte(tc.in[1:n-1])) != tc.plain {
			t.Errorf("Plain(%q) = %v, want %v", tc.in[1:n-1], !tc.plain, tc.plain)
		}
	}
}

// TestAtoi: Atoi reads numbers as strconv.Atoi does, errors included.
func TestAtoi(t *testing.T) {
	for _, s := range []string{"0", "8", "-0", "+5", "-17", "123456789012345678", "-12345678901234567", "1234567890123456789",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "", "-", "+", "1.0", "1e3", "12a", " 1", "--1", "0x10"} {
		want, werr := strconv.Atoi(s)
		got, ok := Atoi([]byte(s))
		if got != want || ok != (werr == nil) {
			t.Errorf("Atoi(%q) = %d, %v; strconv.Atoi: %d, %v", s, got, ok, want, werr)
		}
	}
}

// TestInt: Int reads exactly the JSON integers that fit an int64, as encoding/json
// does into an int64.
func TestInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-17", "123456789012345678", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999", "01", "-01", "+1", "-", "", "1.0", "1e3", "1E3", "a"} {
		var want int64
		werr := json.Unmarshal([]byte(s), &want)
		got, end, ok := Int([]byte(s), 0)
		whole := ok && end == len(s)
		if whole != (werr == nil) || (whole && got != want) {
			t.Errorf("Int(%q) = %d, %d, %v; encoding/json: %d, %v", s, got, end, ok, want, werr)
		}
	}
	// Int skips white space before the integer and stops after it: what follows is
	// the caller's.
	if n, end, ok := Int([]byte(" \n42,"), 0); !ok || n != 42 || end != 4 {
		t.Errorf(`Int(" \n42,") = %d, %d, %v; want 42, 4, true`, n, end, ok)
	}
}

// TestNumber: Number follows JSON's number grammar.
func TestNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1.5", "-1.5e10", "1E+2", "1e-2", "0.0", "01", "1.", ".5", "-", "1e", "1e+", "+1", "1.5.5", "Infinity", "NaN", "0x1"} {
		end, ok := Number([]byte(s), 0)
		want := json.Valid([]byte(s))
		if (ok && end == len(s)) != want {
			t.Errorf("Number(%q) = %d, %v; json.Valid = %v", s, end, ok, want)
		}
	}
}

// TestSkip: Skip finds where each value ends, and nesting beyond MaxDepth is an
// error, as it is for encoding/json.
func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		in  string
		end int // -1 = an error
	}{
		{`"a\"b",`, 6}, {`{"a":[1,{"b":"]}"}]} x`, 20}, {`[]`, 2}, {`123 `, 3}, {`true}`, 4}, {`null]`, 4},
		{``, -1}, {`,`, -1}, {`"abc`, -1}, {`{"a":1`, -1}, {`[1,2`, -1}, {`["]"`, -1},
	} {
		end, err := Skip([]byte(tc.in), 0)
		if (tc.end < 0) != (err != nil) || (err == nil && end != tc.end) {
			t.Errorf("Skip(%q) = %d, %v; want %d", tc.in, end, err, tc.end)
		}
	}
	for _, depth := range []int{MaxDepth, MaxDepth + 1} {
		b := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		end, err := Skip(b, 0)
		ok, jsonOK := err == nil && end == len(b), json.Valid(b)
		if ok != (depth <= MaxDepth) || ok != jsonOK {
			t.Errorf("Skip of %d nested arrays: %d, %v; json.Valid %v; want accepted only up to MaxDepth (%d)", depth, end, err, jsonOK, MaxDepth)
		}
		if depth > MaxDepth && (err == nil || err.Error() != "jsonscan: nesting deeper than MaxDepth at offset 10000") {
			t.Errorf("Skip of %d nested arrays: error %v, want the depth named at offset 10000", depth, err)
		}
	}
}

// TestWalkers: Object and Array call back per member and element, in order, and
// name the offset of what breaks the syntax.
func TestWalkers(t *testing.T) {
	in := []byte(` { "a" : 1 , "b\"c":[ 2 , "x" ,{}] }  `)
	var keys []string
	var elems []string
	end, err := Object(in, 1, func(key, b []byte, j int) (int, error) {
		keys = append(keys, string(key))
		if b[j] == '[' {
			return Array(b, j, func(b []byte, k int) (int, error) {
				e, err := Skip(b, k)
				elems = append(elems, string(b[k:e]))
				return e, err
			})
		}
		return Skip(b, j)
	})
	if err != nil || end != 36 || strings.Join(keys, "|") != `a|b\"c` || strings.Join(elems, "|") != `2|"x"|{}` {
		t.Errorf("Object = %d, %v, keys %q, elements %q; want 36, keys a, b\\\"c, elements 2, \"x\", {}", end, err, keys, elems)
	}
	skip := func(_, b []byte, j int) (int, error) { return Skip(b, j) }
	for _, tc := range []struct{ in, err string }{
		{`{"a":1 "b":2}`, "jsonscan: want ',' or '}' at offset 7"},
		{`{"a" 1}`, "jsonscan: want ':' after a key at offset 5"},
		{`{1:2}`, "jsonscan: want a key at offset 1"},
		{`{"a":1,}`, "jsonscan: want a key at offset 7"},
		{`{"a":1`, "jsonscan: unexpected end of input at offset 6"},
		{`[1,2}`, ""},
	} {
		_, err := Object([]byte(tc.in), 0, skip)
		if tc.err == "" {
			_, err = Array([]byte(tc.in), 0, func(b []byte, j int) (int, error) { return Skip(b, j) })
			tc.err = "jsonscan: want ',' or ']' at offset 4"
		}
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
		}
	}
	// An error from the callback is returned as it is.
	mine := errors.New("mine")
	if _, err := Object([]byte(`{"a":1}`), 0, func(_, _ []byte, _ int) (int, error) { return 0, mine }); err != mine {
		t.Errorf("Object error = %v, want the callback's", err)
	}
}

// TestScanner: the strict subset, and false at the first byte outside it.
func TestScanner(t *testing.T) {
	s := Scanner{B: []byte(` {"s":"v", "i":-12, "f":1.5e3, "t":true, "n":null, "a":[1, 2]} `)}
	var got []string
	ok := s.Object(func(key []byte) bool {
		var v string
		ok := true
		switch string(key) {
		case "s":
			var b []byte
			b, ok = s.Plain()
			v = string(b)
		case "i":
			var n int64
			n, ok = s.Int()
			v = strconv.FormatInt(n, 10)
		case "f":
			var b []byte
			b, ok = s.Number()
			v = string(b)
		case "t":
			var x bool
			x, ok = s.Bool()
			v = strconv.FormatBool(x)
		case "n":
			ok, v = s.Null(), "null"
		case "a":
			ok = s.Array(func() bool { _, ok := s.Int(); return ok })
			v = "[]"
		}
		got = append(got, string(key)+"="+v)
		return ok
	})
	if want := "s=v i=-12 f=1.5e3 t=true n=null a=[]"; !ok || !s.Done() || strings.Join(got, " ") != want {
		t.Errorf("Scanner read %q, ok %v, done at %d; want %q", got, ok, s.I, want)
	}
	for _, in := range []string{`{"s":"a\nb"}`, `{"i":1.5}`, `{"i":01}`, `{"t":tru}`, `{"a":[1,]}`, `{"s":"v",}`, `{"s" "v"}`, `{"s":"v"} x`} {
		s := Scanner{B: []byte(in)}
		ok := s.Object(func(key []byte) bool {
			var ok bool
			switch string(key) {
			case "s":
				_, ok = s.Plain()
			case "i":
				_, ok = s.Int()
			case "t":
				_, ok = s.Bool()
			case "a":
				ok = s.Array(func() bool { _, ok := s.Int(); return ok })
			}
			return ok
		})
		if ok && s.Done() {
			t.Errorf("Scanner read %s; want false", in)
		}
	}
}
