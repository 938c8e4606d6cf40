package jinja

import (
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

type builtinFunc func(r *renderer, args []any, kw *Dict) (any, error)

var builtinGlobals = map[string]any{
	"range":     builtinFunc(globalRange),
	"namespace": builtinFunc(globalNamespace),
	"dict":      builtinFunc(globalDict),
	"joiner":    builtinFunc(globalJoiner),
	"cycler":    builtinFunc(globalCycler),
}

// globalJoiner is jinja2's joiner(sep=", "): a callable returning "" the first time and
// sep afterwards.
func globalJoiner(r *renderer, args []any, kw *Dict) (any, error) {
	sep := toStr(argN(args, kw, 0, "sep", ", "))
	used := false
	return Func(func([]any, *Dict) (any, error) {
		if !used {
			used = true
			return "", nil
		}
		return sep, nil
	}), nil
}

// cycler is jinja2's cycler(*items): next() returns the items in turn, current the next one.
type cycler struct {
	items []any
	pos   int
}

func globalCycler(r *renderer, args []any, kw *Dict) (any, error) {
	if len(args) == 0 {
		return nil, errorf("at least one item has to be provided")
	}
	return &cycler{items: args}, nil
}

func globalRange(r *renderer, args []any, kw *Dict) (any, error) {
	var ints [3]int
	for i, a := range args {
		if i >= 3 {
			return nil, errorf("range expected at most 3 arguments, got %d", len(args))
		}
		v, ok := asInt(a)
		if !ok {
			return nil, errorf("'%s' object cannot be interpreted as an integer", typeName(a))
		}
		ints[i] = v
	}
	start, stop, step := 0, 0, 1
	switch len(args) {
	case 0:
		return nil, errorf("range expected at least 1 argument, got 0")
	case 1:
		stop = ints[0]
	case 2:
		start, stop = ints[0], ints[1]
	default:
		start, stop, step = ints[0], ints[1], ints[2]
	}
	if step == 0 {
		return nil, errorf("range() arg 3 must not be zero")
	}
	n := 0
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && stop < start {
		n = (start - stop - step - 1) / -step
	}
	if n > maxRange {
		return nil, errorf("Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange)
	}
	if err := r.charge(n); err != nil {
		return nil, err
	}
	out := make([]any, n)
	for i := range out {
		out[i] = start + i*step
	}
	return out, nil
}

func globalNamespace(r *renderer, args []any, kw *Dict) (any, error) {
	d := NewDict(kw.Len())
	for _, a := range args {
		src, ok := a.(*Dict)
		if !ok {
			return nil, errorf("namespace() arguments must be mappings")
		}
		for i, k := range src.Keys() {
			d.Set(k, src.vals[i])
		}
	}
	for i, k := range kw.Keys() {
		d.Set(k, kw.vals[i])
	}
	return &namespace{d: d}, nil
}

func globalDict(r *renderer, args []any, kw *Dict) (any, error) {
	d := NewDict(kw.Len())
	for _, a := range args {
		if src, ok := a.(*Dict); ok {
			for i, k := range src.Keys() {
				d.Set(k, src.vals[i])
			}
		}
	}
	for i, k := range kw.Keys() {
		d.Set(k, kw.vals[i])
	}
	return d, nil
}

func (r *renderer) applyFilter(f *filterExpr, v any, sc *scope) (any, error) {
	args, err := r.evalList(f.args, sc)
	if err != nil {
		return nil, err
	}
	var kw *Dict
	if len(f.kwNames) > 0 {
		kw = NewDict(len(f.kwNames))
		for i, n := range f.kwNames {
			x, err := r.eval(f.kwVals[i], sc)
			if err != nil {
				return nil, err
			}
			kw.Set(n, x)
		}
	}
	if iteratingFilters[f.name] {
		if err := r.charge(cost(v)); err != nil {
			return nil, r.at(f.pos, err)
		}
	}
	out, err := r.filter(f.name, v, args, kw)
	if err == nil {
		err = r.charge(cost(out))
	}
	if err != nil {
		return nil, r.at(f.pos, err)
	}
	return out, nil
}

// iteratingFilters do work proportional to their input's length; the others (length,
// first, default, trim, …) are charged only for what they produce.
var iteratingFilters = map[string]bool{
	"join": true, "map": true, "select": true, "reject": true, "selectattr": true, "rejectattr": true,
	"sort": true, "unique": true, "list": true, "sum": true, "min": true, "max": true, "dictsort": true,
	"items": true, "batch": true, "reverse": true, "tojson": true, "string": true, "replace": true,
	"indent": true, "striptags": true, "wordcount": true, "title": true, "e": true, "escape": true,
	"forceescape": true, "format": true, "center": true,
}

// knownFilters lists the filter names this engine implements.
var knownFilters = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`abs attr capitalize center count d default dictsort e escape
		first float format indent int items join last length list lower map max min reject
		rejectattr replace reverse round safe select selectattr sort string striptags sum title
		tojson trim unique upper wordcount batch forceescape truncate slice filesizeformat groupby`) {
		knownFilters[n] = true
	}
}

func (r *renderer) filter(name string, v any, args []any, kw *Dict) (any, error) {
	if !knownFilters[name] {
		return nil, errorf("no filter named '%s'", name)
	}
	arg := func(i int, n string, def any) any { return argN(args, kw, i, n, def) }
	switch name {
	case "abs":
		switch x := v.(type) {
		case int:
			if x < 0 {
				return -x, nil
			}
			return x, nil
		case float64:
			return math.Abs(x), nil
		case bool:
			i, _ := asInt(x)
			return i, nil
		}
		return nil, undefErr(v, errorf("bad operand type for abs(): '%s'", typeName(v)))
	case "attr":
		s, err := strArg(arg(0, "name", nil), "attribute name")
		if err != nil {
			return nil, err
		}
		return getAttr(v, s)
	case "capitalize":
		return pyCapitalize(toStr(v)), nil
	case "center":
		w, _ := asInt(arg(0, "width", 80))
		return strMethod(r, toStr(v), "center", []any{w}, nil)
	case "count", "length":
		switch x := unTuple(v).(type) {
		case string:
			return utf8.RuneCountInString(x), nil
		case []any:
			return len(x), nil
		case *Dict:
			return x.Len(), nil
		case Undefined:
			return 0, nil
		case *namespace:
			return x.d.Len(), nil
		}
		return nil, errorf("object of type '%s' has no len()", typeName(v))
	case "d", "default":
		def := arg(0, "default_value", "")
		if truthy(arg(1, "boolean", false)) {
			if !truthy(v) {
				return def, nil
			}
			return v, nil
		}
		if _, ok := v.(Undefined); ok {
			return def, nil
		}
		return v, nil
	case "dictsort":
		d, ok := v.(*Dict)
		if !ok {
			return nil, errorf("dictsort expects a dict, got %s", typeName(v))
		}
		cs := truthy(arg(0, "case_sensitive", false))
		by, _ := arg(1, "by", "key").(string)
		rev := truthy(arg(2, "reverse", false))
		pos := 0
		if by == "value" {
			pos = 1
		} else if by != "key" {
			return nil, errorf("You can only sort by either \"key\" or \"value\"")
		}
		items, _ := callMethod(r, d, "items", nil, nil)
		list := items.([]any)
		err := sortValues(list, func(x any) any { return foldCase(x.(Tuple)[pos], cs) }, rev)
		return list, err
	case "e", "escape", "forceescape":
		return html.EscapeString(toStr(v)), nil
	case "first":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return Undefined{Hint: "No first item, sequence was empty."}, nil
		}
		return items[0], nil
	case "last":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return Undefined{Hint: "No last item, sequence was empty."}, nil
		}
		return items[len(items)-1], nil
	case "float":
		def := arg(0, "default", 0.0)
		if _, u := v.(Undefined); u {
			return nil, undefErr(v, nil)
		}
		switch x := v.(type) {
		case float64:
			return x, nil
		case int, bool:
			return toFloat(x), nil
		case string:
			f, err := strconv.ParseFloat(strings.TrimFunc(x, pyIsSpace), 64)
			if err != nil {
				return def, nil
			}
			return f, nil
		}
		return def, nil
	case "int":
		def := arg(0, "default", 0)
		if _, u := v.(Undefined); u {
			return nil, undefErr(v, nil)
		}
		base, _ := asInt(arg(1, "base", 10))
		switch x := v.(type) {
		case int:
			return x, nil
		case bool:
			i, _ := asInt(x)
			return i, nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return def, nil
			}
			return int(x), nil
		case string:
			s := strings.ReplaceAll(strings.TrimFunc(x, pyIsSpace), "_", "")
			if i, err := strconv.ParseInt(s, base, 64); err == nil {
				return int(i), nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return int(f), nil
			}
		}
		return def, nil
	case "format":
		if kw.Len() > 0 {
			return percentFormat(toStr(v), kw)
		}
		return percentFormat(toStr(v), Tuple(args))
	case "indent":
		if _, ok := v.(string); !ok {
			return nil, undefErr(v, errorf("indent expects a string, got %s", typeName(v)))
		}
		return indentFilter(toStr(v), arg(0, "width", 4), truthy(arg(1, "first", false)), truthy(arg(2, "blank", false)))
	case "items":
		switch x := v.(type) {
		case *Dict:
			return callMethod(r, x, "items", nil, nil)
		case Undefined:
			return []any{}, nil
		}
		return nil, errorf("items filter expects a mapping, got %s", typeName(v))
	case "join":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		sep := toStr(arg(0, "d", ""))
		attr := arg(1, "attribute", nil)
		var b strings.Builder
		for i, it := range items {
			if i > 0 {
				b.WriteString(sep)
			}
			if attr != nil {
				if it, err = getPath(it, attr); err != nil {
					return nil, err
				}
			}
			b.WriteString(toStr(it))
			if b.Len() > r.lim.MaxOutput {
				return nil, errorf("string exceeds %d bytes", r.lim.MaxOutput)
			}
		}
		return b.String(), nil
	case "list":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		return append([]any{}, items...), nil
	case "lower":
		return strings.ToLower(toStr(v)), nil
	case "upper":
		return strings.ToUpper(toStr(v)), nil
	case "map":
		if !truthy(v) {
			return []any{}, nil
		}
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		if a, ok := kw.Get("attribute"); ok {
			def, hasDef := kw.Get("default")
			for i, it := range items {
				x, err := getPath(it, a)
				if err != nil {
					return nil, err
				}
				if _, u := x.(Undefined); u && hasDef {
					x = def
				}
				out[i] = x
			}
			return out, nil
		}
		if len(args) == 0 {
			return items, nil
		}
		fname, err := strArg(args[0], "map filter name")
		if err != nil {
			return nil, err
		}
		for i, it := range items {
			if out[i], err = r.filter(fname, it, args[1:], kw); err != nil {
				return nil, err
			}
		}
		return out, nil
	case "max", "min":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return Undefined{Hint: "No aggregated item, sequence was empty."}, nil
		}
		cs := truthy(arg(0, "case_sensitive", false))
		attr := arg(1, "attribute", nil)
		best := items[0]
		key := func(x any) any {
			if attr != nil {
				x, _ = getPath(x, attr)
			}
			return foldCase(x, cs)
		}
		for _, it := range items[1:] {
			c, ok := compare(key(it), key(best))
			if !ok {
				return nil, errorf("cannot compare %s and %s", typeName(it), typeName(best))
			}
			if name == "max" && c > 0 || name == "min" && c < 0 {
				best = it
			}
		}
		return best, nil
	case "select", "reject", "selectattr", "rejectattr":
		if !truthy(v) {
			return []any{}, nil
		}
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		rest := args
		var attr any
		if strings.HasSuffix(name, "attr") {
			if len(rest) == 0 {
				return nil, errorf("%s needs an attribute name", name)
			}
			attr, rest = rest[0], rest[1:]
		}
		test := ""
		if len(rest) > 0 {
			if test, err = strArg(rest[0], "test name"); err != nil {
				return nil, err
			}
			rest = rest[1:]
		}
		want := strings.HasPrefix(name, "select")
		out := []any{}
		for _, it := range items {
			x := it
			if attr != nil {
				if x, err = getPath(it, attr); err != nil {
					return nil, err
				}
			}
			var ok bool
			if test == "" {
				ok = truthy(x)
			} else if ok, err = r.runTest(test, x, rest); err != nil {
				return nil, err
			}
			if ok == want {
				out = append(out, it)
			}
		}
		return out, nil
	case "replace":
		if len(args) < 2 {
			return nil, errorf("replace filter needs old and new")
		}
		n, _ := asInt(arg(2, "count", -1))
		return r.replace(toStr(v), toStr(args[0]), toStr(args[1]), n)
	case "reverse":
		switch x := v.(type) {
		case string:
			rs := []rune(x)
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return string(rs), nil
		}
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[len(items)-1-i] = it
		}
		return out, nil
	case "round":
		prec, _ := asInt(arg(0, "precision", 0))
		method, _ := arg(1, "method", "common").(string)
		f := toFloat(v)
		if !isNumber(v) {
			return nil, undefErr(v, errorf("round filter expects a number, got %s", typeName(v)))
		}
		if i, isInt := asInt(v); isInt && method == "common" {
			return i, nil // Python's round(int, n) is an int
		}
		p := math.Pow(10, float64(prec))
		switch method {
		case "common": // Python's round: half to even
			return math.RoundToEven(f*p) / p, nil
		case "floor":
			return math.Floor(f*p) / p, nil
		case "ceil":
			return math.Ceil(f*p) / p, nil
		}
		return nil, errorf("method must be 'common', 'ceil' or 'floor'")
	case "safe":
		return v, nil
	case "sort":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		out := append([]any{}, items...)
		rev := truthy(arg(0, "reverse", false))
		cs := truthy(arg(1, "case_sensitive", false))
		attr := arg(2, "attribute", nil)
		err = sortValues(out, func(x any) any {
			if attr != nil {
				x, _ = getPath(x, attr)
				return []any{foldCase(x, cs)} // jinja2 compares a list of attribute values
			}
			return foldCase(x, cs)
		}, rev)
		return out, err
	case "string":
		return toStr(v), nil
	case "striptags":
		s := tagRe.ReplaceAllString(toStr(v), "")
		return strings.Join(strings.FieldsFunc(html.UnescapeString(s), pyIsSpace), " "), nil
	case "sum":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		attr := arg(0, "attribute", nil)
		var total any = arg(1, "start", 0)
		for _, it := range items {
			if attr != nil {
				if it, err = getPath(it, attr); err != nil {
					return nil, err
				}
			}
			if total, err = r.binop("+", total, it); err != nil {
				return nil, err
			}
		}
		return total, nil
	case "title":
		return jinjaTitle(toStr(v)), nil
	case "tojson":
		return ToJSON(v, jsonOptsFrom(args, kw))
	case "trim":
		f, err := stripChars(arg(0, "chars", nil))
		if err != nil {
			return nil, err
		}
		return strings.TrimFunc(toStr(v), f), nil
	case "unique":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		cs := truthy(arg(0, "case_sensitive", false))
		attr := arg(1, "attribute", nil)
		var seen []any
		hashed := map[any]struct{}{}
		out := []any{}
		for _, it := range items {
			k := it
			if attr != nil {
				if k, err = getPath(it, attr); err != nil {
					return nil, err
				}
			}
			k = foldCase(k, cs)
			switch k.(type) {
			case []any, *Dict:
				return nil, errorf("unhashable type: '%s'", typeName(k))
			}
			if hk, ok := hashKey(k); ok {
				if _, dup := hashed[hk]; !dup {
					hashed[hk] = struct{}{}
					out = append(out, it)
				}
				continue
			}
			if err := r.charge(len(seen)); err != nil {
				return nil, err
			}
			dup := false
			for _, s := range seen {
				if equal(s, k) {
					dup = true
					break
				}
			}
			if !dup {
				seen = append(seen, k)
				out = append(out, it)
			}
		}
		return out, nil
	case "wordcount":
		return len(strings.FieldsFunc(toStr(v), func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || isWordRune(r))
		})), nil
	case "groupby":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		attr := arg(0, "attribute", nil)
		def := arg(1, "default", nil)
		cs := truthy(arg(2, "case_sensitive", false))
		get := func(x any) any {
			g, _ := getPath(x, attr)
			if _, u := g.(Undefined); u && def != nil {
				g = def
			}
			return g
		}
		sorted := append([]any{}, items...)
		if err := sortValues(sorted, func(x any) any { return foldCase(get(x), cs) }, false); err != nil {
			return nil, err
		}
		out := []any{}
		for i := 0; i < len(sorted); {
			k := foldCase(get(sorted[i]), cs)
			j := i + 1
			for j < len(sorted) && equal(foldCase(get(sorted[j]), cs), k) {
				j++
			}
			group := append([]any{}, sorted[i:j]...)
			out = append(out, Tuple{get(group[0]), group}) // (grouper, list)
			i = j
		}
		return out, nil
	case "truncate":
		length, _ := asInt(arg(0, "length", 255))
		leeway, ok := asInt(arg(3, "leeway", nil))
		if !ok {
			leeway = 5 // jinja2's truncate.leeway policy
		}
		str, isStr := v.(string)
		if !isStr { // jinja2 truncates the value itself: only strings can be cut
			n := 0
			switch x := unTuple(v).(type) {
			case []any:
				n = len(x)
			case *Dict:
				n = x.Len()
			case Undefined:
			default:
				return nil, errorf("object of type '%s' has no len()", typeName(v))
			}
			if n <= length+leeway {
				return v, nil
			}
			return nil, errorf("truncate expects a string, got %s", typeName(v))
		}
		s := []rune(str)
		kill := truthy(arg(1, "killwords", false))
		end := []rune(toStr(arg(2, "end", "...")))
		if length < len(end) || leeway < 0 {
			return nil, errorf("expected length >= %d and leeway >= 0", len(end))
		}
		if len(s) <= length+leeway {
			return string(s), nil
		}
		head := string(s[:length-len(end)])
		if !kill {
			if i := strings.LastIndexByte(head, ' '); i >= 0 {
				head = head[:i]
			}
		}
		return head + string(end), nil
	case "slice":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		n, ok := asInt(arg(0, "slices", nil))
		if !ok || n <= 0 {
			return nil, errorf("slice needs a positive number of slices")
		}
		fill, hasFill := kw.Get("fill_with")
		if len(args) > 1 {
			fill, hasFill = args[1], true
		}
		per, extra := len(items)/n, len(items)%n
		out := make([]any, 0, n)
		offset := 0
		for k := range n {
			start := offset + k*per
			if k < extra {
				offset++
			}
			end := offset + (k+1)*per
			part := append([]any{}, items[start:end]...)
			if hasFill && fill != nil && k >= extra {
				part = append(part, fill)
			}
			out = append(out, part)
		}
		return out, nil
	case "filesizeformat":
		if !isNumber(v) {
			if s, ok := v.(string); ok {
				f, err := strconv.ParseFloat(strings.TrimFunc(s, pyIsSpace), 64)
				if err != nil {
					return nil, errorf("could not convert string to float: %s", pyRepr(s))
				}
				v = f
			} else {
				return nil, undefErr(v, errorf("float() argument must be a string or a real number, not '%s'", typeName(v)))
			}
		}
		bytes := toFloat(v)
		binary := truthy(arg(0, "binary", false))
		base := 1000.0
		prefixes := []string{"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"}
		if binary {
			base = 1024
			prefixes = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
		}
		switch {
		case bytes == 1:
			return "1 Byte", nil
		case bytes < base:
			return strconv.Itoa(int(bytes)) + " Bytes", nil
		}
		unit := base
		for i, p := range prefixes {
			unit = math.Pow(base, float64(i+2))
			if bytes < unit || i == len(prefixes)-1 {
				return strconv.FormatFloat(base*bytes/unit, 'f', 1, 64) + " " + p, nil
			}
		}
		return nil, nil
	case "batch":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		n, ok := asInt(arg(0, "linecount", nil))
		if !ok || n <= 0 {
			return nil, errorf("batch needs a positive line count")
		}
		out := []any{}
		for i := 0; i < len(items); i += n {
			row := append([]any{}, items[i:min(i+n, len(items))]...)
			if fill, ok := kw.Get("fill_with"); ok || len(args) > 1 {
				if len(args) > 1 {
					fill = args[1]
				}
				for len(row) < n {
					row = append(row, fill)
				}
			}
			out = append(out, row)
		}
		return out, nil
	}
	return nil, errorf("no filter named '%s'", name)
}

var tagRe = regexp.MustCompile(`(?s)<!--.*?-->|<[^>]*>`)

func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f && (isCased(r) || r >= 0x4e00)
}

func foldCase(v any, caseSensitive bool) any {
	if s, ok := v.(string); ok && !caseSensitive {
		return strings.ToLower(s)
	}
	return v
}

// getPath is jinja2's make_attrgetter: "a.b.0" walks attributes/items by dots.
func getPath(v any, attr any) (any, error) {
	if i, ok := attr.(int); ok {
		return getItem(v, i)
	}
	s := toStr(attr)
	for _, part := range strings.Split(s, ".") {
		var key any = part
		if i, err := strconv.Atoi(part); err == nil {
			key = i
		}
		var err error
		if v, err = getItem(v, key); err != nil {
			return nil, err
		}
	}
	return v, nil
}

var wordBeginRe = regexp.MustCompile(`([-\s({\[<]+)`)

// jinjaTitle is jinja2's title filter.
func jinjaTitle(s string) string {
	var b strings.Builder
	last := 0
	parts := wordBeginRe.FindAllStringIndex(s, -1)
	emit := func(item string) {
		if item == "" {
			return
		}
		r, n := utf8.DecodeRuneInString(item)
		b.WriteString(strings.ToUpper(string(r)))
		b.WriteString(strings.ToLower(item[n:]))
	}
	for _, p := range parts {
		emit(s[last:p[0]])
		emit(s[p[0]:p[1]])
		last = p[1]
	}
	emit(s[last:])
	return b.String()
}

func indentFilter(s string, width any, first, blank bool) (any, error) {
	ind := ""
	switch w := width.(type) {
	case string:
		ind = w
	default:
		n, ok := asInt(w)
		if !ok {
			return nil, errorf("indent width must be int or str")
		}
		ind = strings.Repeat(" ", max(n, 0))
	}
	lines := pySplitlines(s + "\n") // as jinja2
	if blank {
		s = strings.Join(lines, "\n"+ind)
	} else {
		var b strings.Builder
		b.WriteString(lines[0])
		for _, l := range lines[1:] {
			b.WriteByte('\n')
			if l != "" {
				b.WriteString(ind)
			}
			b.WriteString(l)
		}
		s = b.String()
	}
	if first {
		s = ind + s
	}
	return s, nil
}

// hashKey returns a map key equal for Python-equal scalars (1 == 1.0 == True).
func hashKey(v any) (any, bool) {
	switch x := v.(type) {
	case string, nil:
		return v, true
	case int, bool, float64:
		return normKey(x), true
	}
	return nil, false
}
