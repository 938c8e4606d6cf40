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
	switch {
	case s.Lit("true"):
		return true, true
	case s.Lit("false"):
		return false, true
	}
	return false, false
}

// Plain reads a plain string (no escapes, no control characters, valid UTF-8) and
// returns its bytes between the quotes, a part of B.
func (s *Scanner) Plain() ([]byte, bool) {
	if !s.Byte('"') {
		return nil, false
	}
	end, ok := PlainString(s.B, s.I-1)
	if !ok {
		return nil, false
	}
	v := s.B[s.I : end-1]
	s.I = end
	return v, true
}

// Int reads a JSON integer that fits an int64 (see [Int]).
func (s *Scanner) Int() (int64, bool) {
	s.WS()
	n, end, ok := Int(s.B, s.I)
	if ok {
		s.I = end
	}
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
		k, ok := s.Plain()
		if !ok || !s.Byte(':') || !field(k) {
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
