package jsonscan

// Scanner reads a strict subset of JSON from B, at I: white space, plain strings (see
// [Plain]), integers that fit an int64, numbers, true, false and null. It is for fast
// paths that hand any other input to encoding/json: every method reports false, at
// the first byte it does not expect, and leaves I wherever it stopped. Every method
// skips white space first. The zero Scanner reads nothing; set B.
type Scanner struct {
	B []byte
	I int
}

// WS skips white space.
func (s *Scanner) WS() { s.I = SkipWS(s.B, s.I) }

// Byte consumes c.
func (s *Scanner) Byte(c byte) bool {
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// Done reports that nothing but white space follows.
func (s *Scanner) Done() bool {
	s.WS()
	return s.I == len(s.B)
}

// Lit consumes the literal l (such as "null").
func (s *Scanner) Lit(l string) bool {
	s.WS()
	if len(s.B)-s.I >= len(l) && string(s.B[s.I:s.I+len(l)]) == l {
		s.I += len(l)
		return true
	}
	return false
}

// Null consumes null.
func (s *Scanner) Null() bool { return s.Lit("null") }

// Bool reads true or false.
func (s *Scanner) Bool() (v, ok bool) {
	s.WS()
	r := s.B[s.I:]
	if len(r) >= 4 && string(r[:4]) == "true" {
		s.I += 4
		return true, true
	}
	if len(r) >= 5 && string(r[:5]) == "false" {
		s.I += 5
		return false, true
	}
	return false, false
}

// Plain reads a plain string (no escapes, no control characters, valid UTF-8) and
// returns its bytes between the quotes, a part of B.
func (s *Scanner) Plain() ([]byte, bool) {
	i := SkipWS(s.B, s.I)
	end, ok := PlainString(s.B, i)
	if !ok {
		return nil, false
	}
	s.I = end
	return s.B[i+1 : end-1], true
}

// Int reads a JSON integer that fits an int64 (see [Int]).
func (s *Scanner) Int() (n int64, ok bool) {
	n, s.I, ok = Int(s.B, s.I)
	return n, ok
}

// Number reads a JSON number and returns its bytes (see [Number]).
func (s *Scanner) Number() ([]byte, bool) {
	s.WS()
	end, ok := Number(s.B, s.I)
	if !ok {
		return nil, false
	}
	v := s.B[s.I:end]
	s.I = end
	return v, true
}

// Object reads an object whose keys are plain strings, calling field with each key
// after its colon; field reads the value and reports success.
func (s *Scanner) Object(field func(key []byte) bool) bool {
	if !s.Byte('{') {
		return false
	}
	if s.Byte('}') {
		return true
	}
	for {
		// The key, as Plain reads it, with one call fewer: this runs for every member.
		i := SkipWS(s.B, s.I)
		end, ok := PlainString(s.B, i)
		if !ok {
			return false
		}
		s.I = end
		if !s.Byte(':') || !field(s.B[i+1:end-1]) {
			return false
		}
		if !s.Byte(',') {
			return s.Byte('}')
		}
	}
}

// Array reads an array, calling elem to read each element; elem reports success.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.Byte('[') {
		return false
	}
	if s.Byte(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !s.Byte(',') {
			return s.Byte(']')
		}
	}
}
