package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
)

// Limits bound a render so that no template can loop, recurse or grow without end.
// Zero fields take the defaults shown.
type Limits struct {
	MaxSteps  int // loop iterations, macro calls and list elements processed (default DefaultMaxSteps)
	MaxDepth  int // macro call nesting (default 100)
	MaxOutput int // bytes of output and of any string built (default 64 MiB)
}

// DefaultMaxSteps is the default step budget: far above what real templates need (a
// 1,000-message conversation takes 11,000-17,000 with the Llama-3.1, Qwen3, DeepSeek-V3
// and Gemma-3 templates), and about a
// second of work for a template that loops without end.
const DefaultMaxSteps = 20_000_000

func (l Limits) withDefaults() Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 100
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 64 << 20
	}
	return l
}

// maxRange is jinja2's sandbox MAX_RANGE.
const maxRange = 100000

// maxListLen bounds lists built by + and *, so no template can exhaust memory.
const maxListLen = 1 << 20

// maxWidth bounds the field widths of % and str.format.
const maxWidth = 1 << 20

// Template is a parsed template. It is safe for concurrent use by multiple renders.
type Template struct {
	src      string
	body     []stmt
	sizeHint atomic.Int64 // size of the last output, to size the next one's buffer
}

// Parse parses a template as transformers' jinja2 environment does. Syntax errors are
// *Error values with the line and column.
func Parse(src string) (*Template, error) {
	src = normalizeSource(src)
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	body, _, err := p.subparse()
	if err != nil {
		return nil, err
	}
	return &Template{src: src, body: body}, nil
}

// Render renders the template with the given variables. Values may be nil, bool, int,
// float64, string, []any, *Dict, Func, or Go maps and slices (map[string]any keys are
// sorted; convert with [FromGo] beforehand to avoid doing it per render).
func (t *Template) Render(vars map[string]any, lim Limits) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", &Error{Msg: fmt.Sprint("internal error: ", p)}
		}
	}()
	r := &renderer{src: t.src, globals: vars, lim: lim.withDefaults()}
	var b strings.Builder
	b.Grow(int(t.sizeHint.Load()))
	r.out = &b
	root := &scope{}
	if err := r.exec(t.body, root, &b); err != nil {
		if err == errBreak || err == errContinue {
			return "", &Error{Msg: "break or continue outside a loop"}
		}
		return "", err
	}
	t.sizeHint.Store(int64(b.Len()) + 64)
	return b.String(), nil
}

// errOverflow reports an int result beyond 64 bits (Python's ints are unbounded; this
// engine's are not, and it never wraps silently).
var errOverflow = &Error{Msg: "integer overflow: this engine's integers are 64-bit"}

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

type renderer struct {
	src     string
	globals map[string]any
	lim     Limits
	steps   int
	depth   int
	out     *strings.Builder
}

type scope struct {
	parent *scope
	names  []string
	vals   []any
}

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		for i := len(s.names) - 1; i >= 0; i-- {
			if s.names[i] == name {
				return s.vals[i], true
			}
		}
	}
	return nil, false
}

func (s *scope) set(name string, v any) {
	for i, n := range s.names {
		if n == name {
			s.vals[i] = v
			return
		}
	}
	s.names = append(s.names, name)
	s.vals = append(s.vals, v)
}

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// at attaches a source position to an error that has none.
func (r *renderer) at(pos int, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Line == 0 && pos >= 0 {
		line, col := lineCol(r.src, pos)
		return &Error{Line: line, Col: col, Msg: e.Msg}
	}
	if e == nil && err != errBreak && err != errContinue {
		var re *RaiseError
		if errors.As(err, &re) {
			return err
		}
		line, col := lineCol(r.src, pos)
		return &Error{Line: line, Col: col, Msg: err.Error()}
	}
	return err
}

// RaiseError is returned when the template calls a function that fails on purpose, such
// as raise_exception("..."): Msg is the template's message, unchanged.
type RaiseError struct{ Msg string }

func (e *RaiseError) Error() string { return e.Msg }

// charge adds n units of work (list elements visited or built) to the step count.
func (r *renderer) charge(n int) error {
	r.steps += n
	if r.steps > r.lim.MaxSteps {
		return errorf("template exceeded %d steps", r.lim.MaxSteps)
	}
	return nil
}

// cost is the work of visiting v once: its length for lists, dicts and long strings.
func cost(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case *Dict:
		return x.Len()
	case string:
		return len(x) / 64
	}
	return 0
}

func (r *renderer) step(pos int) error {
	r.steps++
	if r.steps > r.lim.MaxSteps {
		return r.at(pos, errorf("template exceeded %d steps", r.lim.MaxSteps))
	}
	return nil
}

func (r *renderer) exec(body []stmt, sc *scope, w *strings.Builder) error {
	for _, s := range body {
		var err error
		switch n := s.(type) {
		case *dataNode:
			w.WriteString(n.text)
		case *outputNode:
			var v any
			if ch, ok := n.x.(*chainExpr); ok {
				v, err = r.evalChain(ch, sc, w)
			} else {
				v, err = r.eval(n.x, sc)
			}
			if err != nil {
				return err
			}
			switch x := v.(type) {
			case string:
				w.WriteString(x)
			case Undefined:
			default:
				w.WriteString(toStr(v))
			}
			if w.Len() > r.lim.MaxOutput {
				return r.at(n.pos, errorf("output exceeds %d bytes", r.lim.MaxOutput))
			}
		case *ifNode:
			done := false
			for i, c := range n.conds {
				var v any
				if v, err = r.eval(c, sc); err != nil {
					return err
				}
				if truthy(v) {
					err = r.exec(n.bodies[i], sc, w)
					done = true
					break
				}
			}
			if !done && n.els != nil {
				err = r.exec(n.els, sc, w)
			}
		case *forNode:
			err = r.execFor(n, sc, w)
		case *setNode:
			var v any
			if v, err = r.eval(n.x, sc); err != nil {
				return err
			}
			err = r.assign(n.target, v, sc, n.pos)
		case *setBlockNode:
			var b strings.Builder
			if err = r.exec(n.body, &scope{parent: sc}, &b); err != nil {
				return err
			}
			var v any = b.String()
			for _, f := range n.filters {
				if v, err = r.applyFilter(f, v, sc); err != nil {
					return err
				}
			}
			err = r.assign(n.target, v, sc, n.pos)
		case *macroNode:
			sc.set(n.m.name, &macroVal{m: n.m, r: r, scope: sc})
		case *callBlockNode:
			caller := &macroVal{m: n.caller, r: r, scope: sc}
			var v any
			if v, err = r.call(n.call, sc, caller); err != nil {
				return err
			}
			w.WriteString(toStr(v))
		case *filterBlockNode:
			var b strings.Builder
			if err = r.exec(n.body, &scope{parent: sc}, &b); err != nil {
				return err
			}
			var v any = b.String()
			for _, f := range n.filters {
				if v, err = r.applyFilter(f, v, sc); err != nil {
					return err
				}
			}
			w.WriteString(toStr(v))
		case *withNode:
			inner := &scope{parent: sc}
			vals, err := r.evalList(n.vals, sc)
			if err != nil {
				return err
			}
			for i, t := range n.targets {
				if err := r.assign(t, vals[i], inner, n.pos); err != nil {
					return err
				}
			}
			if err := r.exec(n.body, inner, w); err != nil {
				return err
			}
		case *breakNode:
			return errBreak
		case *continueNode:
			return errContinue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) assign(t assignTarget, v any, sc *scope, pos int) error {
	if t.attr != "" {
		obj, ok := sc.lookup(t.names[0])
		if !ok {
			obj, ok = r.globals[t.names[0]]
		}
		ns, isNS := obj.(*namespace)
		if !ok || !isNS {
			return r.at(pos, errorf("cannot assign attribute on non-namespace object"))
		}
		ns.d.Set(t.attr, v)
		return nil
	}
	if !t.tuple {
		sc.set(t.names[0], v)
		return nil
	}
	items, err := iterate(v)
	if err != nil {
		return r.at(pos, err)
	}
	if len(items) != len(t.names) {
		return r.at(pos, errorf("cannot unpack %d values into %d names", len(items), len(t.names)))
	}
	for i, n := range t.names {
		if i < len(t.nested) && t.nested[i] != nil {
			if err := r.assign(*t.nested[i], items[i], sc, pos); err != nil {
				return err
			}
			continue
		}
		sc.set(n, items[i])
	}
	return nil
}

// iterate returns the items a for loop visits.
func iterate(v any) ([]any, error) {
	switch x := unTuple(v).(type) {
	case []any:
		return x, nil
	case *Dict:
		return x.Keys(), nil
	case string:
		out := make([]any, 0, len(x))
		for _, c := range x {
			out = append(out, string(c))
		}
		return out, nil
	case Undefined:
		return nil, nil
	case *namespace:
		return x.d.Keys(), nil
	}
	return nil, errorf("'%s' object is not iterable", typeName(v))
}

func (r *renderer) execFor(n *forNode, sc *scope, w *strings.Builder) error {
	it, err := r.eval(n.iter, sc)
	if err != nil {
		return err
	}
	items, err := iterate(it)
	if err != nil {
		return r.at(n.pos, err)
	}
	if err := r.charge(cost(it)); err != nil {
		return r.at(n.pos, err)
	}
	if n.cond != nil {
		var kept []any
		for _, item := range items {
			if err := r.step(n.pos); err != nil {
				return err
			}
			isc := &scope{parent: sc}
			if err := r.assign(n.target, item, isc, n.pos); err != nil {
				return err
			}
			c, err := r.eval(n.cond, isc)
			if err != nil {
				return err
			}
			if truthy(c) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		if n.els != nil {
			return r.exec(n.els, sc, w)
		}
		return nil
	}
	loop := &loopVar{items: items}
	isc := &scope{parent: sc, names: make([]string, 0, 4), vals: make([]any, 0, 4)}
	for i, item := range items {
		if err := r.step(n.pos); err != nil {
			return err
		}
		loop.i = i
		isc.names = isc.names[:0]
		isc.vals = isc.vals[:0]
		isc.names = append(isc.names, "loop")
		isc.vals = append(isc.vals, loop)
		if err := r.assign(n.target, item, isc, n.pos); err != nil {
			return err
		}
		err := r.exec(n.body, isc, w)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
	}
	return nil
}

func (r *renderer) lookup(name string, sc *scope) any {
	if v, ok := sc.lookup(name); ok {
		return v
	}
	if v, ok := r.globals[name]; ok {
		return v
	}
	if v, ok := builtinGlobals[name]; ok {
		return v
	}
	return Undefined{Hint: "'" + name + "' is undefined"}
}

func (r *renderer) eval(x expr, sc *scope) (any, error) {
	switch n := x.(type) {
	case *literal:
		return n.v, nil
	case *nameExpr:
		return r.lookup(n.name, sc), nil
	case *getattrExpr:
		obj, err := r.eval(n.x, sc)
		if err != nil {
			return nil, err
		}
		v, err := getAttr(obj, n.name)
		if err != nil {
			return nil, r.at(n.pos, err)
		}
		return v, nil
	case *getitemExpr:
		obj, err := r.eval(n.x, sc)
		if err != nil {
			return nil, err
		}
		key, err := r.eval(n.key, sc)
		if err != nil {
			return nil, err
		}
		v, err := getItem(obj, key)
		if err != nil {
			return nil, r.at(n.pos, err)
		}
		return v, nil
	case *sliceExpr:
		return r.evalSlice(n, sc)
	case *callExpr:
		return r.call(n, sc, nil)
	case *filterExpr:
		v, err := r.eval(n.x, sc)
		if err != nil {
			return nil, err
		}
		return r.applyFilter(n, v, sc)
	case *testExpr:
		v, err := r.eval(n.x, sc)
		if err != nil {
			return nil, err
		}
		args, err := r.evalList(n.args, sc)
		if err != nil {
			return nil, err
		}
		ok, err := r.runTest(n.name, v, args)
		if err != nil {
			return nil, r.at(n.pos, err)
		}
		return ok != n.negate, nil
	case *unaryExpr:
		v, err := r.eval(n.x, sc)
		if err != nil {
			return nil, err
		}
		switch n.op {
		case '!':
			return !truthy(v), nil
		case '-':
			switch y := v.(type) {
			case int:
				return -y, nil
			case float64:
				return -y, nil
			case bool:
				i, _ := asInt(y)
				return -i, nil
			}
			return nil, r.at(n.pos, undefErr(v, errorf("bad operand type for unary -: '%s'", typeName(v))))
		default:
			if isNumber(v) {
				if b, ok := v.(bool); ok {
					i, _ := asInt(b)
					return i, nil
				}
				return v, nil
			}
			return nil, r.at(n.pos, undefErr(v, errorf("bad operand type for unary +: '%s'", typeName(v))))
		}
	case *binaryExpr:
		l, err := r.eval(n.l, sc)
		if err != nil {
			return nil, err
		}
		rv, err := r.eval(n.r, sc)
		if err != nil {
			return nil, err
		}
		v, err := r.binop(n.op, l, rv)
		if err == nil {
			err = r.charge(cost(v))
		}
		if err != nil {
			return nil, r.at(n.pos, err)
		}
		return v, nil
	case *chainExpr:
		return r.evalChain(n, sc, nil)
	case *logicExpr:
		l, err := r.eval(n.l, sc)
		if err != nil {
			return nil, err
		}
		if truthy(l) != n.and {
			return l, nil
		}
		return r.eval(n.r, sc)
	case *compareExpr:
		l, err := r.eval(n.first, sc)
		if err != nil {
			return nil, err
		}
		for i, op := range n.ops {
			rv, err := r.eval(n.rest[i], sc)
			if err != nil {
				return nil, err
			}
			if err := r.charge(cost(rv)); err != nil {
				return nil, r.at(n.pos, err)
			}
			ok, err := compareOp(op, l, rv)
			if err != nil {
				return nil, r.at(n.pos, err)
			}
			if !ok {
				return false, nil
			}
			l = rv
		}
		return true, nil
	case *condExpr:
		c, err := r.eval(n.cond, sc)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(n.yes, sc)
		}
		if n.no == nil {
			return Undefined{Hint: "the inline if-expression evaluated to false and no else section was defined"}, nil
		}
		return r.eval(n.no, sc)
	case *listExpr:
		return r.evalList(n.items, sc)
	case *tupleExpr:
		v, err := r.evalList(n.items, sc)
		return Tuple(v), err
	case *dictExpr:
		d := NewDict(len(n.keys))
		for i := range n.keys {
			k, err := r.eval(n.keys[i], sc)
			if err != nil {
				return nil, err
			}
			v, err := r.eval(n.vals[i], sc)
			if err != nil {
				return nil, err
			}
			switch k.(type) {
			case string, int, float64, bool, nil:
			default:
				return nil, errorf("unhashable type: '%s'", typeName(k))
			}
			d.Set(k, v)
		}
		return d, nil
	}
	return nil, errorf("unknown expression %T", x)
}

func (r *renderer) evalList(xs []expr, sc *scope) ([]any, error) {
	out := make([]any, len(xs))
	for i, x := range xs {
		v, err := r.eval(x, sc)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// undefErr returns the undefined error when v is Undefined, else err.
func undefErr(v any, err error) error {
	if u, ok := v.(Undefined); ok {
		return errorf("%s", u.Hint)
	}
	return err
}

func (r *renderer) binop(op string, l, rv any) (any, error) {
	if op == "~" {
		a, b := toStr(l), toStr(rv)
		if len(a)+len(b) > r.lim.MaxOutput {
			return nil, errorf("string exceeds %d bytes", r.lim.MaxOutput)
		}
		return a + b, nil
	}
	if f, ok := l.(string); ok && op == "%" {
		return percentFormat(f, rv)
	}
	if _, ok := l.(Undefined); ok {
		return nil, undefErr(l, nil)
	}
	if _, ok := rv.(Undefined); ok {
		return nil, undefErr(rv, nil)
	}
	typeErr := func() error {
		return errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(l), typeName(rv))
	}
	if isNumber(l) && isNumber(rv) {
		li, lok := asInt(l)
		ri, rok := asInt(rv)
		ints := lok && rok
		lf, rf := toFloat(l), toFloat(rv)
		switch op {
		case "+":
			if ints {
				s := li + ri
				if (s > li) != (ri > 0) {
					return nil, errOverflow
				}
				return s, nil
			}
			return lf + rf, nil
		case "-":
			if ints {
				s := li - ri
				if (s < li) != (ri > 0) {
					return nil, errOverflow
				}
				return s, nil
			}
			return lf - rf, nil
		case "*":
			if ints {
				if li != 0 && ri != 0 {
					p := li * ri
					if p/ri != li || (li == -1 && ri == math.MinInt) || (ri == -1 && li == math.MinInt) {
						return nil, errOverflow
					}
					return p, nil
				}
				return 0, nil
			}
			return lf * rf, nil
		case "/":
			if rf == 0 {
				return nil, errorf("division by zero")
			}
			return lf / rf, nil
		case "//":
			if rf == 0 {
				return nil, errorf("integer division or modulo by zero")
			}
			if ints {
				q := li / ri
				if (li%ri != 0) && ((li < 0) != (ri < 0)) {
					q--
				}
				return q, nil
			}
			return math.Floor(lf / rf), nil
		case "%":
			if rf == 0 {
				return nil, errorf("integer division or modulo by zero")
			}
			if ints {
				m := li % ri
				if m != 0 && (m < 0) != (ri < 0) {
					m += ri
				}
				return m, nil
			}
			m := math.Mod(lf, rf)
			if m != 0 && (m < 0) != (rf < 0) {
				m += rf
			}
			return m, nil
		case "**":
			if ints && ri >= 0 {
				switch {
				case li == 0 || li == 1:
					if ri == 0 {
						return 1, nil
					}
					return li, nil
				case li == -1:
					if ri%2 == 0 {
						return 1, nil
					}
					return -1, nil
				}
				res := 1
				for range ri {
					p := res * li
					if p/li != res {
						return nil, errOverflow
					}
					res = p
				}
				return res, nil
			}
			return math.Pow(lf, rf), nil
		}
		return nil, typeErr()
	}
	if lt, ok := l.(Tuple); ok {
		if rt, ok := rv.(Tuple); ok {
			v, err := r.binop(op, []any(lt), []any(rt))
			if l, ok := v.([]any); ok {
				return Tuple(l), err
			}
			return v, err
		}
	}
	switch op {
	case "+":
		switch x := l.(type) {
		case string:
			if y, ok := rv.(string); ok {
				if len(x)+len(y) > r.lim.MaxOutput {
					return nil, errorf("string exceeds %d bytes", r.lim.MaxOutput)
				}
				return x + y, nil
			}
			return nil, errorf("can only concatenate str (not \"%s\") to str", typeName(rv))
		case []any:
			if y, ok := rv.([]any); ok {
				if len(x)+len(y) > maxListLen {
					return nil, errorf("list longer than %d items", maxListLen)
				}
				out := make([]any, 0, len(x)+len(y))
				return append(append(out, x...), y...), nil
			}
			return nil, errorf("can only concatenate list (not \"%s\") to list", typeName(rv))
		}
	case "*":
		if t, ok := l.(Tuple); ok {
			v, err := r.binop(op, []any(t), rv)
			if lst, ok := v.([]any); ok {
				return Tuple(lst), err
			}
			return v, err
		}
		if _, ok := rv.(Tuple); ok {
			return r.binop(op, rv, l)
		}
		s, n := unTuple(l), unTuple(rv)
		if _, ok := asInt(s); ok {
			s, n = n, s
		}
		k, ok := asInt(n)
		if !ok {
			return nil, typeErr()
		}
		k = max(k, 0)
		switch x := s.(type) {
		case string:
			if len(x)*k > r.lim.MaxOutput || k > r.lim.MaxOutput {
				return nil, errorf("string exceeds %d bytes", r.lim.MaxOutput)
			}
			return strings.Repeat(x, k), nil
		case []any:
			if k > maxListLen || len(x)*k > maxListLen {
				return nil, errorf("list too large")
			}
			out := make([]any, 0, len(x)*k)
			for range k {
				out = append(out, x...)
			}
			return out, nil
		}
	case "%":
		if f, ok := l.(string); ok {
			return percentFormat(f, rv)
		}
	}
	return nil, typeErr()
}

func compareOp(op string, l, rv any) (bool, error) {
	switch op {
	case "==":
		return equal(l, rv), nil
	case "!=":
		return !equal(l, rv), nil
	case "in", "notin":
		ok, err := contains(rv, l)
		if op == "notin" {
			ok = !ok
		}
		return ok, err
	}
	c, ok := compare(l, rv)
	if !ok {
		if _, u := l.(Undefined); u {
			return false, undefErr(l, nil)
		}
		if _, u := rv.(Undefined); u {
			return false, undefErr(rv, nil)
		}
		return false, errorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(l), typeName(rv))
	}
	switch op {
	case "<":
		return c < 0, nil
	case ">":
		return c > 0, nil
	case "<=":
		return c <= 0, nil
	}
	return c >= 0, nil
}

func contains(container, item any) (bool, error) {
	switch c := unTuple(container).(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, errorf("'in <string>' requires string as left operand, not %s", typeName(item))
		}
		return strings.Contains(c, s), nil
	case []any:
		for _, e := range c {
			if equal(e, item) {
				return true, nil
			}
		}
		return false, nil
	case *Dict:
		switch item.(type) {
		case []any, *Dict:
			return false, errorf("unhashable type: '%s'", typeName(item))
		}
		_, ok := c.Get(item)
		return ok, nil
	case *namespace:
		_, ok := c.d.Get(item)
		return ok, nil
	case Undefined:
		return false, nil
	}
	return false, errorf("argument of type '%s' is not iterable", typeName(container))
}

func (r *renderer) evalSlice(n *sliceExpr, sc *scope) (any, error) {
	obj, err := r.eval(n.x, sc)
	if err != nil {
		return nil, err
	}
	var idx [3]any
	for i, e := range []expr{n.start, n.stop, n.step} {
		if e == nil {
			continue
		}
		if idx[i], err = r.eval(e, sc); err != nil {
			return nil, err
		}
	}
	v, err := slice(obj, idx[0], idx[1], idx[2])
	if err != nil {
		return nil, r.at(n.pos, err)
	}
	if u, ok := v.(Undefined); ok && !isConst(n.x) {
		// jinja2 compiles a slice to a plain Python subscript, which raises; only
		// constant-folded literals become undefined
		if _, isDict := obj.(*Dict); isDict {
			return nil, r.at(n.pos, errorf("unhashable type: 'slice'"))
		}
		return nil, r.at(n.pos, errorf("%s", u.Hint))
	}
	return v, nil
}

// sliceIndices is Python's slice.indices.
func sliceIndices(n int, start, stop, step any) (int, int, int, error) {
	st := 1
	if step != nil {
		s, ok := asInt(step)
		if !ok {
			return 0, 0, 0, errorf("slice indices must be integers or None")
		}
		if s == 0 {
			return 0, 0, 0, errorf("slice step cannot be zero")
		}
		st = s
	}
	conv := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, ok := asInt(v)
		if !ok {
			return 0, errorf("slice indices must be integers or None")
		}
		if i < 0 {
			i += n
			if i < 0 {
				if st < 0 {
					return -1, nil
				}
				return 0, nil
			}
		}
		if i >= n {
			if st < 0 {
				return n - 1, nil
			}
			return n, nil
		}
		return i, nil
	}
	var a, b int
	var err error
	if st > 0 {
		if a, err = conv(start, 0); err != nil {
			return 0, 0, 0, err
		}
		b, err = conv(stop, n)
	} else {
		if a, err = conv(start, n-1); err != nil {
			return 0, 0, 0, err
		}
		b, err = conv(stop, -1)
	}
	return a, b, st, err
}

func slice(obj, start, stop, step any) (any, error) {
	if t, ok := obj.(Tuple); ok {
		v, err := slice([]any(t), start, stop, step)
		if l, ok := v.([]any); ok {
			return Tuple(l), err
		}
		return v, err
	}
	switch x := obj.(type) {
	case []any:
		a, b, st, err := sliceIndices(len(x), start, stop, step)
		if err != nil {
			return nil, err
		}
		if st == 1 {
			if b <= a {
				return []any{}, nil
			}
			return x[a:b:b], nil
		}
		var out []any
		for i := a; (st > 0 && i < b) || (st < 0 && i > b); i += st {
			out = append(out, x[i])
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case string:
		rs := []rune(x)
		a, b, st, err := sliceIndices(len(rs), start, stop, step)
		if err != nil {
			return nil, err
		}
		var sb strings.Builder
		for i := a; (st > 0 && i < b) || (st < 0 && i > b); i += st {
			sb.WriteRune(rs[i])
		}
		return sb.String(), nil
	case Undefined:
		return nil, undefErr(x, nil)
	}
	// jinja2's getitem turns the TypeError into an undefined value
	return Undefined{Hint: "'" + typeName(obj) + "' object is not subscriptable"}, nil
}

// call evaluates a call expression; caller is set for {% call %} blocks.
func (r *renderer) call(n *callExpr, sc *scope, caller *macroVal) (any, error) {
	var fn any
	var recv any
	method := ""
	if ga, ok := n.fn.(*getattrExpr); ok {
		obj, err := r.eval(ga.x, sc)
		if err != nil {
			return nil, err
		}
		if hasMethod(obj, ga.name) {
			recv, method = obj, ga.name
		} else if fn, err = getAttr(obj, ga.name); err != nil {
			return nil, r.at(ga.pos, err)
		}
	} else {
		var err error
		if fn, err = r.eval(n.fn, sc); err != nil {
			return nil, err
		}
	}
	args, err := r.evalList(n.args, sc)
	if err != nil {
		return nil, err
	}
	var kw *Dict
	if len(n.kwNames) > 0 {
		kw = NewDict(len(n.kwNames))
		for i, name := range n.kwNames {
			v, err := r.eval(n.kwVals[i], sc)
			if err != nil {
				return nil, err
			}
			kw.Set(name, v)
		}
	}
	if n.star != nil {
		v, err := r.eval(n.star, sc)
		if err != nil {
			return nil, err
		}
		more, err := iterate(v)
		if err != nil {
			return nil, r.at(n.pos, err)
		}
		args = append(args, more...)
	}
	if n.dstar != nil {
		v, err := r.eval(n.dstar, sc)
		if err != nil {
			return nil, err
		}
		d, ok := v.(*Dict)
		if !ok {
			return nil, r.at(n.pos, errorf("argument after ** must be a mapping, not %s", typeName(v)))
		}
		if kw == nil {
			kw = NewDict(d.Len())
		}
		for i, k := range d.Keys() {
			kw.Set(k, d.vals[i])
		}
	}
	if method != "" {
		if err := r.charge(cost(recv)); err != nil {
			return nil, r.at(n.pos, err)
		}
		v, err := callMethod(r, recv, method, args, kw)
		if err == nil {
			err = r.charge(cost(v))
		}
		if err != nil {
			return nil, r.at(n.pos, err)
		}
		return v, nil
	}
	v, err := r.callValue(fn, args, kw, caller)
	if err != nil {
		return nil, r.at(n.pos, err)
	}
	return v, nil
}

func (r *renderer) callValue(fn any, args []any, kw *Dict, caller *macroVal) (any, error) {
	switch f := fn.(type) {
	case Func:
		return f(args, kw)
	case func(args []any, kwargs *Dict) (any, error):
		return f(args, kw)
	case *macroVal:
		return r.callMacro(f, args, kw, caller)
	case boundMethod:
		return callMethod(r, f.recv, f.name, args, kw)
	case builtinFunc:
		return f(r, args, kw)
	case Undefined:
		return nil, undefErr(f, nil)
	}
	return nil, errorf("'%s' object is not callable", typeName(fn))
}

func (r *renderer) callMacro(m *macroVal, args []any, kw *Dict, caller *macroVal) (any, error) {
	if err := r.step(-1); err != nil {
		return nil, err
	}
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > r.lim.MaxDepth {
		return nil, errorf("macro calls nested deeper than %d", r.lim.MaxDepth)
	}
	sc := &scope{parent: m.scope}
	params := m.m.params
	var varargs []any
	for i, p := range params {
		switch {
		case i < len(args):
			sc.set(p, args[i])
		default:
			if v, ok := kw.Get(p); ok {
				sc.set(p, v)
				continue
			}
			if d := m.m.defaults[i]; d != nil {
				v, err := r.eval(d, sc)
				if err != nil {
					return nil, err
				}
				sc.set(p, v)
			} else {
				sc.set(p, Undefined{Hint: "parameter '" + p + "' was not provided"})
			}
		}
	}
	if len(args) > len(params) {
		varargs = args[len(params):]
	}
	sc.set("varargs", Tuple(orEmpty(varargs)))
	extra := NewDict(0)
	for i, k := range kw.Keys() {
		if s, ok := k.(string); ok && !containsStr(params, s) {
			extra.Set(k, kw.vals[i])
		}
	}
	sc.set("kwargs", extra)
	if caller != nil {
		sc.set("caller", caller)
	} else if m.caller != nil {
		sc.set("caller", m.caller)
	}
	var b strings.Builder
	if err := r.exec(m.m.body, sc, &b); err != nil {
		if err == errBreak || err == errContinue {
			return nil, errorf("break or continue outside a loop")
		}
		return nil, err
	}
	return b.String(), nil
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Render parses and renders src in one call (for tests and one-off use).
func Render(src string, vars map[string]any) (string, error) {
	t, err := Parse(src)
	if err != nil {
		return "", err
	}
	return t.Render(vars, Limits{})
}

// evalChain evaluates a chain of "+" or "~". When every operand of a "+" chain is a
// string (the common case in chat templates), or always for "~", the pieces are
// concatenated once — or written straight to w when w is not nil, returning "".
// Otherwise it folds left with binop, exactly as nested binary expressions would.
func (r *renderer) evalChain(n *chainExpr, sc *scope, w *strings.Builder) (any, error) {
	var stack [8]any
	vals := stack[:0]
	allStr := true
	size := 0
	for _, it := range n.items {
		v, err := r.eval(it, sc)
		if err != nil {
			return nil, err
		}
		if s, ok := v.(string); ok {
			size += len(s)
		} else {
			allStr = false
		}
		vals = append(vals, v)
	}
	if n.op == "~" || allStr {
		if n.op == "~" {
			size = 0
			for i, v := range vals {
				if _, ok := v.(string); !ok {
					vals[i] = toStr(v)
				}
				size += len(vals[i].(string))
			}
		}
		if size > r.lim.MaxOutput {
			return nil, r.at(n.pos[0], errorf("string exceeds %d bytes", r.lim.MaxOutput))
		}
		if w != nil {
			for _, v := range vals {
				w.WriteString(v.(string))
			}
			return "", nil
		}
		var b strings.Builder
		b.Grow(size)
		for _, v := range vals {
			b.WriteString(v.(string))
		}
		return b.String(), nil
	}
	acc := vals[0]
	for i, v := range vals[1:] {
		var err error
		if acc, err = r.binop(n.op, acc, v); err != nil {
			return nil, r.at(n.pos[i], err)
		}
	}
	return acc, nil
}

// isConst reports whether x is made of literals only (jinja2 folds those at compile time).
func isConst(x expr) bool {
	switch n := x.(type) {
	case *literal:
		return true
	case *listExpr:
		for _, it := range n.items {
			if !isConst(it) {
				return false
			}
		}
		return true
	case *tupleExpr:
		for _, it := range n.items {
			if !isConst(it) {
				return false
			}
		}
		return true
	case *dictExpr:
		for i := range n.keys {
			if !isConst(n.keys[i]) || !isConst(n.vals[i]) {
				return false
			}
		}
		return true
	}
	return false
}
