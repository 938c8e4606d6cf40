package jinja

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Undefined is the value of a missing variable or attribute. It prints as "", is false,
// iterates as empty, and raises an error when used in arithmetic or attribute access.
type Undefined struct {
	Hint string // why it is undefined, used as the error message when it is misused
}

// Dict is an insertion-ordered dict, as Python's. Keys are strings, ints, bools or nil.
// The zero value is an empty dict. A Dict must not be modified while a render uses it.
type Dict struct {
	keys []any
	vals []any
	idx  map[any]int // built when the dict grows beyond linear-scan size
}

// NewDict returns an empty dict with room for n entries.
func NewDict(n int) *Dict {
	buf := make([]any, 2*n) // one allocation for keys and values
	return &Dict{keys: buf[:0:n], vals: buf[n : n : 2*n]}
}

// NewDicts returns n empty dicts with room for size entries each, allocated together
// (for building many small dicts, such as chat messages, cheaply).
func NewDicts(n, size int) []Dict {
	ds := make([]Dict, n)
	buf := make([]any, 2*n*size)
	for i := range ds {
		b := buf[2*i*size : 2*(i+1)*size]
		ds[i].keys = b[:0:size]
		ds[i].vals = b[size : size : 2*size]
	}
	return ds
}

// Len returns the number of entries.
func (d *Dict) Len() int {
	if d == nil {
		return 0
	}
	return len(d.keys)
}

// Keys returns the keys in insertion order (the slice must not be modified).
func (d *Dict) Keys() []any {
	if d == nil {
		return nil
	}
	return d.keys
}

// Values returns the values in insertion order (the slice must not be modified).
func (d *Dict) Values() []any {
	if d == nil {
		return nil
	}
	return d.vals
}

func normKey(k any) any {
	switch v := k.(type) {
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			return int(v)
		}
	}
	return k
}

func (d *Dict) find(k any) int {
	if d == nil {
		return -1
	}
	k = normKey(k)
	if d.idx != nil {
		if i, ok := d.idx[k]; ok {
			return i
		}
		return -1
	}
	for i, kk := range d.keys {
		if normKey(kk) == k {
			return i
		}
	}
	return -1
}

// Get returns the value stored under k.
func (d *Dict) Get(k any) (any, bool) {
	if i := d.find(k); i >= 0 {
		return d.vals[i], true
	}
	return nil, false
}

// Set stores v under k, keeping the position of an existing key. Keys must be
// hashable scalars (string, int, float64, bool, nil); others are ignored.
func (d *Dict) Set(k, v any) {
	switch k.(type) {
	case string, int, float64, bool, nil:
	default:
		return
	}
	if i := d.find(k); i >= 0 {
		d.vals[i] = v
		return
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	if d.idx != nil {
		d.idx[normKey(k)] = len(d.keys) - 1
	} else if len(d.keys) > 12 {
		d.idx = make(map[any]int, len(d.keys)*2)
		for i, kk := range d.keys {
			d.idx[normKey(kk)] = i
		}
	}
}

// Tuple is a Python tuple: it behaves as a list but prints as (a, b) and is not equal
// to a list with the same items.
type Tuple []any

// unTuple returns v with a Tuple turned into the list it wraps.
func unTuple(v any) any {
	if t, ok := v.(Tuple); ok {
		return []any(t)
	}
	return v
}

// namespace is the mutable object made by namespace(...).
type namespace struct{ d *Dict }

// loopVar is the "loop" variable inside for loops.
type loopVar struct {
	items   []any
	i       int
	last    any // last value passed to loop.changed
	hasLast bool
}

// Func is a Go function callable from templates.
type Func func(args []any, kwargs *Dict) (any, error)

// macroVal is a macro bound to its defining scope.
type macroVal struct {
	m      *macro
	caller any // for call blocks: the caller macro, else nil
	r      *renderer
	scope  *scope
}

// boundMethod is x.name before it is called, e.g. as a value passed around.
type boundMethod struct {
	recv any
	name string
}

func truthy(v any) bool {
	switch x := unTuple(v).(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	case Undefined:
		return false
	}
	return true
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case Tuple:
		return "tuple"
	case *Dict:
		return "dict"
	case Undefined:
		return "Undefined"
	case *namespace:
		return "Namespace"
	case *loopVar:
		return "LoopContext"
	case *macroVal:
		return "Macro"
	case Func, boundMethod:
		return "builtin_function_or_method"
	}
	return "object"
}

// toStr is Python's str(v) as jinja2 prints it.
func toStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case Undefined:
		return ""
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case float64:
		return formatFloat(x)
	}
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

// formatFloat is Python's repr(float).
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// use the exponent from the shortest repr (log10 can be off by one at boundaries)
	if i := strings.LastIndexByte(s, 'e'); i >= 0 {
		exp, _ = strconv.Atoi(s[i+1:])
	}
	if exp < -4 || exp >= 16 {
		mant, e, _ := strings.Cut(s, "e")
		sign := e[0]
		digits := strings.TrimLeft(e[1:], "0")
		if len(digits) < 2 {
			digits = strings.Repeat("0", 2-len(digits)) + digits
		}
		return mant + "e" + string(sign) + digits
	}
	s = strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

const maxReprDepth = 100

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > maxReprDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case string:
		b.WriteString(pyRepr(x))
	case Tuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
		}
		b.WriteByte(']')
	case *Dict:
		b.WriteByte('{')
		for i, k := range x.Keys() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k, depth+1)
			b.WriteString(": ")
			writeRepr(b, x.vals[i], depth+1)
		}
		b.WriteByte('}')
	case *namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.d, depth+1)
		b.WriteByte('>')
	case Undefined:
		b.WriteString("Undefined")
	case *loopVar:
		b.WriteString("<LoopContext ")
		b.WriteString(strconv.Itoa(x.i + 1))
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(len(x.items)))
		b.WriteByte('>')
	case *macroVal:
		b.WriteString("<Macro '" + x.m.name + "'>")
	case Func, boundMethod:
		b.WriteString("<built-in function>")
	default:
		b.WriteString(toStr(v))
	}
}

// pyRepr is Python's repr(str).
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i]), 16))
			i++
			continue
		}
		i += n
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			h := strconv.FormatUint(uint64(r), 16)
			if len(h) < 2 {
				b.WriteByte('0')
			}
			b.WriteString(h)
		case r >= 0x80 && !unicode.IsPrint(r) && r != ' ':
			h := strconv.FormatUint(uint64(r), 16)
			switch {
			case r <= 0xff:
				b.WriteString(`\x` + strings.Repeat("0", 2-len(h)) + h)
			case r <= 0xffff:
				b.WriteString(`\u` + strings.Repeat("0", 4-len(h)) + h)
			default:
				b.WriteString(`\U` + strings.Repeat("0", 8-len(h)) + h)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, float64, bool:
		return true
	}
	return false
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// equal is Python's ==.
func equal(a, b any) bool { return equalDepth(a, b, 0) }

func equalDepth(a, b any, depth int) bool {
	if depth > maxReprDepth {
		return false
	}
	if isNumber(a) && isNumber(b) {
		ai, aok := asInt(a)
		bi, bok := asInt(b)
		if aok && bok {
			return ai == bi
		}
		return toFloat(a) == toFloat(b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case Tuple:
		y, ok := b.(Tuple)
		return ok && equalDepth([]any(x), []any(y), depth+1)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalDepth(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.Keys() {
			w, ok := y.Get(k)
			if !ok || !equalDepth(x.vals[i], w, depth+1) {
				return false
			}
		}
		return true
	case *namespace:
		return a == b
	}
	return false
}

// compare is Python's ordering for <, >, sort; ok=false when the types are unorderable.
func compare(a, b any) (int, bool) {
	if isNumber(a) && isNumber(b) {
		ai, aok := asInt(a)
		bi, bok := asInt(b)
		if aok && bok {
			return cmpInt(ai, bi), true
		}
		fa, fb := toFloat(a), toFloat(b)
		switch {
		case fa < fb:
			return -1, true
		case fa > fb:
			return 1, true
		}
		return 0, true
	}
	if ta, ok := a.(Tuple); ok {
		if tb, ok := b.(Tuple); ok {
			return compare([]any(ta), []any(tb))
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := 0; i < len(x) && i < len(y); i++ {
				if equal(x[i], y[i]) {
					continue
				}
				return compare(x[i], y[i])
			}
			return cmpInt(len(x), len(y)), true
		}
	}
	return 0, false
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortValues sorts vs stably by key(v) with Python ordering; the error reports
// unorderable types.
func sortValues(vs []any, key func(any) any, reverse bool) error {
	var bad error
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := key(vs[i]), key(vs[j])
		if reverse {
			a, b = b, a
		}
		c, ok := compare(a, b)
		if !ok && bad == nil {
			bad = errorf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
		}
		return c < 0
	})
	return bad
}
