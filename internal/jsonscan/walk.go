package jsonscan

// MaxDepth is the deepest nesting of objects and arrays [Skip] reads, encoding/json's
// own limit: deeper input is an error, as it is for encoding/json.
const MaxDepth = 10000

// Skip returns the index after the JSON value at b[i]. It finds the end without
// validating: a string ends at its closing quote (see [ScanString]), an object or array
// at its matching bracket, nested at most [MaxDepth] deep (brackets inside strings do
// not count), and any other value at the next comma, closing bracket or white space.
// The errors are no value at b[i], an unterminated string or container, and nesting
// past MaxDepth.
func Skip(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errAt(i, "want a value")
	}
	switch b[i] {
	case '"':
		end, _, ok := ScanString(b, i)
		if !ok {
			return 0, errAt(i, "unterminated string")
		}
		return end, nil
	case '{', '[':
		return skipContainer(b, i)
	}
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			break
		}
		j++
	}
	if j == i {
		return 0, errAt(i, "want a value")
	}
	return j, nil
}

// containerStop marks the bytes skipContainer looks at: quotes and brackets. It runs
// through everything else (keys' values, commas, white space) in a tight loop.
var containerStop = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipContainer is Skip for the object or array at b[i].
func skipContainer(b []byte, i int) (int, error) {
	depth := 0
	for j := i; ; j++ {
		for j < len(b) && !containerStop[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, errAt(i, "unterminated object or array")
		}
		switch b[j] {
		case '"':
			end, _, ok := ScanString(b, j)
			if !ok {
				return 0, errAt(j, "unterminated string")
			}
			j = end - 1
		case '{', '[':
			if depth++; depth > MaxDepth {
				return 0, errAt(j, "nesting deeper than MaxDepth")
			}
		default: // '}', ']'
			if depth--; depth == 0 {
				return j + 1, nil
			}
		}
	}
}

// Object calls f for each member of the object whose '{' is b[i], in order, with the
// member's key (its raw bytes between the quotes, not unescaped: [Plain] says whether
// it reads as itself) and the index of its value, after white space; f returns the
// index after the value (typically from a reader of the value, or [Skip]). Object
// returns the index after the closing '}'. Errors from f are returned as they are.
func Object(b []byte, i int, f func(key, b []byte, j int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, errAt(i, "want an object")
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errAt(i, "want a key")
		}
		end, _, ok := ScanString(b, i)
		if !ok {
			return 0, errAt(i, "unterminated string")
		}
		key := b[i+1 : end-1]
		i = SkipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, errAt(i, "want ':' after a key")
		}
		i = SkipWS(b, i+1)
		var err error
		if i, err = f(key, b, i); err != nil {
			return 0, err
		}
		var closed bool
		if i, closed, err = Next(b, i, '}'); closed || err != nil {
			return i, err
		}
	}
}

// Array calls f with the index of each element of the array whose '[' is b[i], in
// order (b[j] is then the element's first byte); f returns the index after the
// element. Array returns the index after the closing ']'.
func Array(b []byte, i int, f func(b []byte, j int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return 0, errAt(i, "want an array")
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return 0, errAt(i, "want a value")
		}
		var err error
		if i, err = f(b, i); err != nil {
			return 0, err
		}
		var closed bool
		if i, closed, err = Next(b, i, ']'); closed || err != nil {
			return i, err
		}
	}
}

// Next reads what follows an object member's or array element's value ending at b[i]:
// the closing byte (closed, and the index after it) or a comma (the index of the next
// element, past white space).
func Next(b []byte, i int, closing byte) (next int, closed bool, err error) {
	i = SkipWS(b, i)
	switch {
	case i >= len(b):
		return 0, false, errAt(i, "unexpected end of input")
	case b[i] == closing:
		return i + 1, true, nil
	case b[i] != ',':
		return 0, false, errAt(i, "want ',' or '"+string(closing)+"'")
	}
	return SkipWS(b, i+1), false, nil
}
