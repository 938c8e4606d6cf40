package jinja

import (
	"strconv"
	"strings"
)

// percentFormat is Python's "fmt % args" for the common conversions.
func percentFormat(f string, args any) (any, error) {
	var list []any
	var mapping *Dict
	switch x := args.(type) {
	case Tuple:
		list = x
	case []any:
		list = []any{x}
	case *Dict:
		mapping = x
		list = []any{x}
	default:
		list = []any{x}
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return nil, errorf("incomplete format")
		}
		var val any
		haveVal := false
		if f[i] == '(' {
			j := strings.IndexByte(f[i:], ')')
			if j < 0 || mapping == nil {
				return nil, errorf("format requires a mapping")
			}
			val, _ = mapping.Get(f[i+1 : i+j])
			haveVal = true
			i += j + 1
		}
		spec := ""
		for i < len(f) && strings.IndexByte("-+ #0123456789.", f[i]) >= 0 {
			spec += string(f[i])
			i++
		}
		if i >= len(f) {
			return nil, errorf("incomplete format")
		}
		verb := f[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveVal {
			if n >= len(list) {
				return nil, errorf("not enough arguments for format string")
			}
			val = list[n]
			n++
		}
		var s string
		switch verb {
		case 's':
			s = toStr(val)
		case 'r', 'a':
			var sb strings.Builder
			writeRepr(&sb, val, 0)
			s = sb.String()
		case 'd', 'i':
			if !isNumber(val) {
				return nil, errorf("%%d format: a real number is required, not %s", typeName(val))
			}
			s = strconv.Itoa(int(toFloat(val)))
			if iv, ok := asInt(val); ok {
				s = strconv.Itoa(iv)
			}
		case 'f', 'F', 'e', 'g':
			if !isNumber(val) {
				return nil, errorf("must be real number, not %s", typeName(val))
			}
			prec := 6
			if k := strings.IndexByte(spec, '.'); k >= 0 {
				prec, _ = strconv.Atoi(spec[k+1:])
				prec = min(prec, 100)
				spec = spec[:k]
			}
			s = strconv.FormatFloat(toFloat(val), verb|0x20, prec, 64)
		case 'x', 'X', 'o':
			iv, ok := asInt(val)
			if !ok {
				return nil, errorf("%%%c format: an integer is required", verb)
			}
			base := 16
			if verb == 'o' {
				base = 8
			}
			s = strconv.FormatInt(int64(iv), base)
			if verb == 'X' {
				s = strings.ToUpper(s)
			}
		default:
			return nil, errorf("unsupported format character '%c'", verb)
		}
		s = pad(s, spec)
		b.WriteString(s)
	}
	if n < len(list) && mapping == nil {
		return nil, errorf("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

func pad(s, spec string) string {
	left := strings.Contains(spec, "-")
	zero := strings.HasPrefix(strings.TrimLeft(spec, "-+ #"), "0")
	w, _ := strconv.Atoi(strings.TrimLeft(spec, "-+ #0"))
	w = min(w, maxWidth)
	n := len([]rune(s))
	if w <= n {
		return s
	}
	if left {
		return s + strings.Repeat(" ", w-n)
	}
	if zero {
		return strings.Repeat("0", w-n) + s
	}
	return strings.Repeat(" ", w-n) + s
}

// pyFormat is Python's str.format for {}, {0}, {name}, {name.attr}, !r/!s and simple specs.
func pyFormat(f string, args []any, kw *Dict) (any, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '{' && i+1 < len(f) && f[i+1] == '{':
			b.WriteByte('{')
			i++
			continue
		case c == '}' && i+1 < len(f) && f[i+1] == '}':
			b.WriteByte('}')
			i++
			continue
		case c != '{':
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(f[i:], '}')
		if j < 0 {
			return nil, errorf("Single '{' encountered in format string")
		}
		field := f[i+1 : i+j]
		i += j
		spec := ""
		if k := strings.IndexByte(field, ':'); k >= 0 {
			field, spec = field[:k], field[k+1:]
		}
		conv := byte(0)
		if k := strings.IndexByte(field, '!'); k >= 0 && k+1 < len(field) {
			conv = field[k+1]
			field = field[:k]
		}
		name, rest, _ := strings.Cut(field, ".")
		var v any
		if name == "" {
			if auto >= len(args) {
				return nil, errorf("Replacement index %d out of range for positional args tuple", auto)
			}
			v = args[auto]
			auto++
		} else if idx, err := strconv.Atoi(name); err == nil {
			if idx >= len(args) {
				return nil, errorf("Replacement index %d out of range for positional args tuple", idx)
			}
			v = args[idx]
		} else {
			var ok bool
			if v, ok = kw.Get(name); !ok {
				return nil, errorf("KeyError: %s", pyRepr(name))
			}
		}
		if rest != "" {
			var err error
			if v, err = getPath(v, rest); err != nil {
				return nil, err
			}
		}
		var s string
		if conv == 'r' {
			var sb strings.Builder
			writeRepr(&sb, v, 0)
			s = sb.String()
		} else if spec != "" && isNumber(v) && strings.ContainsAny(spec, "fd") {
			out, err := percentFormat("%"+spec, v)
			if err != nil {
				return nil, err
			}
			s = out.(string)
			spec = ""
		} else {
			s = toStr(v)
		}
		if spec != "" {
			align := byte('<')
			if isNumber(v) {
				align = '>'
			}
			fill := " "
			if len(spec) >= 2 && strings.IndexByte("<>^", spec[1]) >= 0 {
				fill, align, spec = spec[:1], spec[1], spec[2:]
			} else if strings.IndexByte("<>^", spec[0]) >= 0 {
				align, spec = spec[0], spec[1:]
			}
			w, _ := strconv.Atoi(spec)
			w = min(w, maxWidth)
			n := len([]rune(s))
			if w > n {
				p := w - n
				switch align {
				case '<':
					s += strings.Repeat(fill, p)
				case '>':
					s = strings.Repeat(fill, p) + s
				default:
					s = strings.Repeat(fill, p/2) + s + strings.Repeat(fill, p-p/2)
				}
			}
		}
		b.WriteString(s)
	}
	return b.String(), nil
}
