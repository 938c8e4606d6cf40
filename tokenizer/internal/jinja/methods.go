package jinja

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyIsSpace is Python's str.isspace for one rune (also what re's \s matches).
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

var strMethods = map[string]bool{
	"strip": true, "lstrip": true, "rstrip": true, "split": true, "rsplit": true,
	"startswith": true, "endswith": true, "upper": true, "lower": true, "title": true,
	"capitalize": true, "replace": true, "format": true, "find": true, "rfind": true,
	"index": true, "rindex": true, "count": true, "join": true, "isdigit": true, "isalpha": true,
	"isalnum": true, "isspace": true, "isupper": true, "islower": true, "isnumeric": true,
	"isdecimal": true, "splitlines": true, "partition": true, "rpartition": true,
	"removeprefix": true, "removesuffix": true, "swapcase": true, "casefold": true,
	"zfill": true, "center": true, "ljust": true, "rjust": true, "istitle": true,
}

var dictMethods = map[string]bool{
	"items": true, "keys": true, "values": true, "get": true, "copy": true,
	// modifying methods exist but are unsafe in the immutable sandbox
	"pop": true, "popitem": true, "update": true, "setdefault": true, "clear": true,
}

var listMethods = map[string]bool{
	"index": true, "count": true, "copy": true,
	"append": true, "extend": true, "insert": true, "pop": true, "remove": true,
	"reverse": true, "sort": true, "clear": true,
}

var unsafeMethods = map[string]bool{
	"pop": true, "popitem": true, "update": true, "setdefault": true, "clear": true,
	"append": true, "extend": true, "insert": true, "remove": true, "reverse": true, "sort": true,
}

func hasMethod(obj any, name string) bool {
	if _, ok := obj.(Tuple); ok {
		return name == "index" || name == "count"
	}
	switch obj.(type) {
	case string:
		return strMethods[name]
	case *Dict:
		return dictMethods[name]
	case []any:
		return listMethods[name]
	case *loopVar:
		return name == "cycle" || name == "changed"
	case *cycler:
		return name == "next" || name == "reset"
	}
	return false
}

// getAttr is jinja2's environment.getattr: attribute first, then item.
func getAttr(obj any, name string) (any, error) {
	if hasMethod(obj, name) {
		return boundMethod{recv: obj, name: name}, nil
	}
	switch x := obj.(type) {
	case *Dict:
		if v, ok := x.Get(name); ok {
			return v, nil
		}
		return Undefined{Hint: "'dict object' has no attribute '" + name + "'"}, nil
	case *namespace:
		if v, ok := x.d.Get(name); ok {
			return v, nil
		}
	case Tuple:
		// groupby's items are (grouper, list) named tuples
		if len(x) == 2 && name == "grouper" {
			return x[0], nil
		}
		if len(x) == 2 && name == "list" {
			return x[1], nil
		}
	case *loopVar:
		return x.attr(name), nil
	case *cycler:
		if name == "current" {
			return x.items[x.pos], nil
		}
	case Undefined:
		return nil, errorf("%s", x.Hint)
	}
	return Undefined{Hint: "'" + typeName(obj) + " object' has no attribute '" + name + "'"}, nil
}

// getItem is jinja2's environment.getitem: item first, then attribute.
func getItem(obj, key any) (any, error) {
	switch x := unTuple(obj).(type) {
	case []any:
		if i, ok := asInt(key); ok {
			if i < 0 {
				i += len(x)
			}
			if i >= 0 && i < len(x) {
				return x[i], nil
			}
			return Undefined{Hint: "list object has no element " + strconv.Itoa(i)}, nil
		}
	case string:
		if i, ok := asInt(key); ok {
			n := utf8.RuneCountInString(x)
			if i < 0 {
				i += n
			}
			if i >= 0 && i < n {
				for j, r := range x {
					_ = j
					if i == 0 {
						return string(r), nil
					}
					i--
				}
			}
			return Undefined{Hint: "string index out of range"}, nil
		}
	case *Dict:
		if v, ok := x.Get(key); ok {
			return v, nil
		}
		if s, ok := key.(string); ok && dictMethods[s] {
			return boundMethod{recv: obj, name: s}, nil
		}
		return Undefined{Hint: "'dict object' has no attribute " + pyRepr(toStr(key))}, nil
	case Undefined:
		return nil, errorf("%s", x.Hint)
	}
	if s, ok := key.(string); ok {
		return getAttr(obj, s)
	}
	return Undefined{Hint: "'" + typeName(obj) + " object' has no attribute " + toStr(key)}, nil
}

func (l *loopVar) attr(name string) any {
	n := len(l.items)
	switch name {
	case "index":
		return l.i + 1
	case "index0":
		return l.i
	case "revindex":
		return n - l.i
	case "revindex0":
		return n - l.i - 1
	case "first":
		return l.i == 0
	case "last":
		return l.i == n-1
	case "length":
		return n
	case "depth":
		return 1
	case "depth0":
		return 0
	case "previtem":
		if l.i > 0 {
			return l.items[l.i-1]
		}
		return Undefined{Hint: "there is no previous item"}
	case "nextitem":
		if l.i < n-1 {
			return l.items[l.i+1]
		}
		return Undefined{Hint: "there is no next item"}
	}
	return Undefined{Hint: "'LoopContext object' has no attribute '" + name + "'"}
}

func argN(args []any, kw *Dict, i int, name string, def any) any {
	if i < len(args) {
		return args[i]
	}
	if v, ok := kw.Get(name); ok {
		return v
	}
	return def
}

func strArg(v any, what string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errorf("%s must be str, not %s", what, typeName(v))
	}
	return s, nil
}

func callMethod(r *renderer, recv any, name string, args []any, kw *Dict) (any, error) {
	switch x := unTuple(recv).(type) {
	case string:
		return strMethod(r, x, name, args, kw)
	case *Dict:
		if unsafeMethods[name] {
			return nil, errorf("access to attribute '%s' of 'dict' object is unsafe.", name)
		}
		switch name {
		case "items":
			out := make([]any, x.Len())
			for i, k := range x.Keys() {
				out[i] = Tuple{k, x.vals[i]}
			}
			return out, nil
		case "keys":
			return append([]any{}, x.Keys()...), nil
		case "values":
			return append([]any{}, x.Values()...), nil
		case "get":
			if len(args) == 0 {
				return nil, errorf("get expected at least 1 argument, got 0")
			}
			if v, ok := x.Get(args[0]); ok {
				return v, nil
			}
			return argN(args, nil, 1, "", nil), nil
		case "copy":
			d := NewDict(x.Len())
			for i, k := range x.Keys() {
				d.Set(k, x.vals[i])
			}
			return d, nil
		}
	case []any:
		if unsafeMethods[name] {
			return nil, errorf("access to attribute '%s' of 'list' object is unsafe.", name)
		}
		switch name {
		case "index":
			for i, e := range x {
				if len(args) > 0 && equal(e, args[0]) {
					return i, nil
				}
			}
			return nil, errorf("value is not in list")
		case "count":
			n := 0
			for _, e := range x {
				if len(args) > 0 && equal(e, args[0]) {
					n++
				}
			}
			return n, nil
		case "copy":
			return append([]any{}, x...), nil
		}
	case *loopVar:
		switch name {
		case "cycle":
			if len(args) == 0 {
				return nil, errorf("no items for cycling given")
			}
			return args[x.i%len(args)], nil
		case "changed":
			v := Tuple(append([]any{}, args...))
			if x.hasLast && equal(x.last, v) {
				return false, nil
			}
			x.last, x.hasLast = v, true
			return true, nil
		}
	case *cycler:
		switch name {
		case "next":
			v := x.items[x.pos]
			x.pos = (x.pos + 1) % len(x.items)
			return v, nil
		case "reset":
			x.pos = 0
			return nil, nil
		}
	}
	return nil, errorf("'%s' object has no attribute '%s'", typeName(recv), name)
}

func stripChars(v any) (func(rune) bool, error) {
	if v == nil {
		return pyIsSpace, nil
	}
	chars, err := strArg(v, "strip arg")
	if err != nil {
		return nil, err
	}
	return func(r rune) bool { return strings.ContainsRune(chars, r) }, nil
}

func strMethod(r *renderer, s, name string, args []any, kw *Dict) (any, error) {
	switch name {
	case "strip", "lstrip", "rstrip":
		f, err := stripChars(argN(args, kw, 0, "chars", nil))
		if err != nil {
			return nil, err
		}
		switch name {
		case "strip":
			return strings.TrimFunc(s, f), nil
		case "lstrip":
			return strings.TrimLeftFunc(s, f), nil
		}
		return strings.TrimRightFunc(s, f), nil
	case "split", "rsplit":
		sep := argN(args, kw, 0, "sep", nil)
		maxv, _ := asInt(argN(args, kw, 1, "maxsplit", -1))
		var parts []string
		if sep == nil {
			parts = splitWhitespace(s, maxv, name == "rsplit")
		} else {
			sp, err := strArg(sep, "sep")
			if err != nil {
				return nil, err
			}
			if sp == "" {
				return nil, errorf("empty separator")
			}
			if name == "split" || maxv < 0 {
				parts = strings.SplitN(s, sp, maxOrAll(maxv))
			} else {
				parts = rsplitN(s, sp, maxv)
			}
		}
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil
	case "startswith", "endswith":
		pv := argN(args, kw, 0, "prefix", nil)
		var cands []any
		if l, ok := pv.(Tuple); ok {
			cands = l
		} else {
			cands = []any{pv}
		}
		sub := s
		if len(args) > 1 {
			v, err := slice(s, args[1], argN(args, nil, 2, "", nil), nil)
			if err != nil {
				return nil, err
			}
			sub = v.(string)
		}
		for _, c := range cands {
			p, err := strArg(c, name+" arg")
			if err != nil {
				return nil, err
			}
			if name == "startswith" && strings.HasPrefix(sub, p) || name == "endswith" && strings.HasSuffix(sub, p) {
				return true, nil
			}
		}
		return false, nil
	case "upper":
		return strings.ToUpper(s), nil
	case "lower":
		return strings.ToLower(s), nil
	case "casefold":
		return strings.ToLower(s), nil
	case "swapcase":
		return strings.Map(func(c rune) rune {
			if unicode.IsUpper(c) {
				return unicode.ToLower(c)
			}
			return unicode.ToUpper(c)
		}, s), nil
	case "title":
		return pyTitle(s), nil
	case "capitalize":
		return pyCapitalize(s), nil
	case "replace":
		if len(args) < 2 {
			return nil, errorf("replace expected at least 2 arguments, got %d", len(args))
		}
		old, err := strArg(args[0], "replace arg 1")
		if err != nil {
			return nil, err
		}
		nw, err := strArg(args[1], "replace arg 2")
		if err != nil {
			return nil, err
		}
		n, _ := asInt(argN(args, kw, 2, "count", -1))
		return r.replace(s, old, nw, n)
	case "format":
		return pyFormat(s, args, kw)
	case "find", "rfind", "index", "rindex", "count":
		sub, err := strArg(argN(args, kw, 0, "sub", nil), name+" arg")
		if err != nil {
			return nil, err
		}
		switch name {
		case "count":
			if sub == "" {
				return utf8.RuneCountInString(s) + 1, nil
			}
			return strings.Count(s, sub), nil
		case "find", "index":
			i := strings.Index(s, sub)
			if i < 0 && name == "index" {
				return nil, errorf("substring not found")
			}
			if i < 0 {
				return -1, nil
			}
			return utf8.RuneCountInString(s[:i]), nil
		}
		i := strings.LastIndex(s, sub)
		if i < 0 && name == "rindex" {
			return nil, errorf("substring not found")
		}
		if i < 0 {
			return -1, nil
		}
		return utf8.RuneCountInString(s[:i]), nil
	case "join":
		items, err := iterate(argN(args, kw, 0, "iterable", nil))
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(items))
		for i, it := range items {
			p, ok := it.(string)
			if !ok {
				return nil, errorf("sequence item %d: expected str instance, %s found", i, typeName(it))
			}
			parts[i] = p
		}
		return strings.Join(parts, s), nil
	case "isdigit", "isnumeric", "isdecimal":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsDigit(c) }) < 0, nil
	case "isalpha":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) }) < 0, nil
	case "isalnum":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) < 0, nil
	case "isspace":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !pyIsSpace(c) }) < 0, nil
	case "isupper", "islower":
		cased := false
		for _, c := range s {
			if unicode.IsUpper(c) || unicode.IsTitle(c) {
				if name == "islower" {
					return false, nil
				}
				cased = true
			} else if unicode.IsLower(c) {
				if name == "isupper" {
					return false, nil
				}
				cased = true
			}
		}
		return cased, nil
	case "istitle":
		return s == pyTitle(s) && strings.IndexFunc(s, unicode.IsLetter) >= 0, nil
	case "splitlines":
		var out []any
		for _, l := range pySplitlines(s) {
			out = append(out, l)
		}
		return orEmpty(out), nil
	case "partition", "rpartition":
		sep, err := strArg(argN(args, kw, 0, "sep", nil), "sep")
		if err != nil || sep == "" {
			return nil, errorf("empty separator")
		}
		var i int
		if name == "partition" {
			i = strings.Index(s, sep)
		} else {
			i = strings.LastIndex(s, sep)
		}
		if i < 0 {
			if name == "partition" {
				return Tuple{s, "", ""}, nil
			}
			return Tuple{"", "", s}, nil
		}
		return Tuple{s[:i], sep, s[i+len(sep):]}, nil
	case "removeprefix", "removesuffix":
		a, err := strArg(argN(args, kw, 0, "prefix", nil), name+" arg")
		if err != nil {
			return nil, err
		}
		if name == "removeprefix" {
			return strings.TrimPrefix(s, a), nil
		}
		return strings.TrimSuffix(s, a), nil
	case "zfill", "center", "ljust", "rjust":
		w, ok := asInt(argN(args, kw, 0, "width", nil))
		if !ok {
			return nil, errorf("%s expects an integer width", name)
		}
		if w > r.lim.MaxOutput {
			return nil, errorf("string exceeds %d bytes", r.lim.MaxOutput)
		}
		fill := " "
		if f, ok := argN(args, kw, 1, "fillchar", " ").(string); ok && utf8.RuneCountInString(f) == 1 {
			fill = f
		}
		n := utf8.RuneCountInString(s)
		if w <= n {
			return s, nil
		}
		pad := w - n
		switch name {
		case "zfill":
			sign := ""
			if s != "" && (s[0] == '-' || s[0] == '+') {
				sign, s = s[:1], s[1:]
			}
			return sign + strings.Repeat("0", pad) + s, nil
		case "ljust":
			return s + strings.Repeat(fill, pad), nil
		case "rjust":
			return strings.Repeat(fill, pad) + s, nil
		}
		left := pad / 2
		if pad%2 == 1 && w%2 == 1 {
			left++
		}
		return strings.Repeat(fill, left) + s + strings.Repeat(fill, pad-left), nil
	}
	return nil, errorf("'str' object has no attribute '%s'", name)
}

func maxOrAll(n int) int {
	if n < 0 {
		return -1
	}
	return n + 1
}

func rsplitN(s, sep string, n int) []string {
	var out []string
	for n > 0 {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		out = append(out, s[i+len(sep):])
		s = s[:i]
		n--
	}
	out = append(out, s)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func splitWhitespace(s string, maxsplit int, fromRight bool) []string {
	if maxsplit < 0 {
		return strings.FieldsFunc(s, pyIsSpace)
	}
	var out []string
	if !fromRight {
		for len(out) < maxsplit {
			s = strings.TrimLeftFunc(s, pyIsSpace)
			i := strings.IndexFunc(s, pyIsSpace)
			if s == "" || i < 0 {
				break
			}
			out = append(out, s[:i])
			s = s[i:]
		}
		if s = strings.TrimLeftFunc(s, pyIsSpace); s != "" {
			out = append(out, s)
		}
		return orEmptyStr(out)
	}
	var rev []string
	for len(rev) < maxsplit {
		s = strings.TrimRightFunc(s, pyIsSpace)
		i := strings.LastIndexFunc(s, pyIsSpace)
		if s == "" || i < 0 {
			break
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		rev = append(rev, s[i+n:])
		s = s[:i]
	}
	if s = strings.TrimRightFunc(s, pyIsSpace); s != "" {
		rev = append(rev, s)
	}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return orEmptyStr(out)
}

func orEmptyStr(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// pyTitle is Python's str.title.
func pyTitle(s string) string {
	var b strings.Builder
	prev := false
	for _, r := range s {
		if prev {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prev = isCased(r)
	}
	return b.String()
}

// pyCapitalize is Python's str.capitalize.
func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToTitle(r)) + strings.ToLower(s[n:])
}

func (r *renderer) replace(s, old, nw string, n int) (any, error) {
	if n < 0 {
		n = -1
	}
	cnt := strings.Count(s, old)
	if old == "" {
		cnt = utf8.RuneCountInString(s) + 1
	}
	if n >= 0 && n < cnt {
		cnt = n
	}
	if len(s)+cnt*(len(nw)-len(old)) > r.lim.MaxOutput {
		return nil, errorf("string exceeds %d bytes", r.lim.MaxOutput)
	}
	return strings.Replace(s, old, nw, n), nil
}
