package jsonscan

import "strconv"

// Atoi is strconv.Atoi on b, without making a string of it: an optional sign and
// decimal digits (leading zeros allowed), ok false for anything else or an int
// overflow.
func Atoi(b []byte) (int, bool) {
	if n := len(b); n > 0 && n <= 18 {
		neg, d := false, b
		if d[0] == '-' || d[0] == '+' {
			neg, d = d[0] == '-', d[1:]
		}
		if len(d) > 0 {
			v := 0
			for _, c := range d {
				if c < '0' || c > '9' {
					return 0, false
				}
				v = v*10 + int(c-'0')
			}
			if neg {
				v = -v
			}
			return v, true
		}
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil
}

// Int reads the JSON integer at b[i], after white space (an optional minus, digits
// without a leading zero, no fraction or exponent after them), that fits an int64, and
// returns it and the index after it. ok is false for anything else: no digits, a
// leading zero, a fraction or exponent (a JSON number, but not an integer), or an
// int64 overflow; end is then where reading stopped.
func Int(b []byte, i int) (n int64, end int, ok bool) {
	i = SkipWS(b, i)
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	d := i - s
	if d == 0 || d > 19 || (d > 1 && b[s] == '0') {
		return 0, i, false
	}
	if d == 19 { // may overflow: let strconv check
		v, err := strconv.ParseInt(string(b[s-b2i(neg):i]), 10, 64)
		if err != nil {
			return 0, i, false
		}
		n, neg = v, false
	}
	if i < len(b) {
		switch b[i] {
		case '.', 'e', 'E':
			return 0, i, false
		}
	}
	if neg {
		n = -n
	}
	return n, i, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Number returns the index after the JSON number at b[i] (RFC 8259's grammar: an
// optional minus, an integer part without a leading zero, an optional fraction and
// exponent); ok is false when b[i:] does not start with one. b[i:end] parses with
// strconv.ParseFloat, which may still report a value out of range.
func Number(b []byte, i int) (end int, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	s := i
	i = digits(b, i)
	if d := i - s; d == 0 || (d > 1 && b[s] == '0') {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		s = i + 1
		if i = digits(b, s); i == s {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		s = i
		if i = digits(b, s); i == s {
			return 0, false
		}
	}
	return i, true
}

// digits returns the index after the run of decimal digits at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
