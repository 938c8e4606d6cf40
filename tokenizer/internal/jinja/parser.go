package jinja

import (
	"errors"
	"fmt"
	"strconv"
)

const maxParseDepth = 200

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	line, col := lineCol(p.src, pos)
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) isName(v string) bool { t := p.cur(); return t.kind == tName && t.val == v }
func (p *parser) isOp(v string) bool   { t := p.cur(); return t.kind == tOp && t.val == v }

func (p *parser) expectOp(v string) error {
	if !p.isOp(v) {
		return p.errAt(p.cur().pos, "expected %q, got %s", v, describe(p.cur()))
	}
	p.next()
	return nil
}

func (p *parser) expectBlockEnd() error {
	if p.cur().kind != tBlockEnd {
		return p.errAt(p.cur().pos, "expected end of statement block, got %s", describe(p.cur()))
	}
	p.next()
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tBlockEnd:
		return "end of statement block"
	case tVarEnd:
		return "end of print statement"
	case tBlockBegin:
		return "begin of statement block"
	case tVarBegin:
		return "begin of print statement"
	case tString:
		return strconv.Quote(t.val)
	case tData:
		return "template data"
	}
	return "'" + t.val + "'"
}

func (p *parser) expectName() (token, error) {
	t := p.cur()
	if t.kind != tName {
		return t, p.errAt(t.pos, "expected a name, got %s", describe(t))
	}
	p.next()
	return t, nil
}

// subparse parses statements until one of the end tags, returning which one ended the
// body; the tag's name has been consumed, the rest of the tag has not.
func (p *parser) subparse(ends ...string) ([]stmt, string, error) {
	var body []stmt
	for {
		t := p.cur()
		switch t.kind {
		case tData:
			p.next()
			body = append(body, &dataNode{t.val})
		case tVarBegin:
			p.next()
			x, err := p.parseTuple(true, false, nil)
			if err != nil {
				return nil, "", err
			}
			if p.cur().kind != tVarEnd {
				return nil, "", p.errAt(p.cur().pos, "expected end of print statement, got %s", describe(p.cur()))
			}
			p.next()
			body = append(body, &outputNode{x: x, pos: t.pos})
		case tBlockBegin:
			p.next()
			nt := p.cur()
			if nt.kind != tName {
				return nil, "", p.errAt(nt.pos, "expected statement name, got %s", describe(nt))
			}
			for _, e := range ends {
				if nt.val == e {
					p.next()
					return body, e, nil
				}
			}
			s, err := p.parseStatement()
			if err != nil {
				return nil, "", err
			}
			body = append(body, s...)
		case tEOF:
			if len(ends) > 0 {
				return nil, "", p.errAt(t.pos, "unexpected end of template, expected '%s'", ends[len(ends)-1])
			}
			return body, "", nil
		default:
			return nil, "", p.errAt(t.pos, "unexpected %s", describe(t))
		}
	}
}

func (p *parser) parseStatement() ([]stmt, error) {
	t := p.next()
	switch t.val {
	case "if":
		s, err := p.parseIf()
		return []stmt{s}, err
	case "for":
		s, err := p.parseFor(t.pos)
		return []stmt{s}, err
	case "set":
		s, err := p.parseSet(t.pos)
		return []stmt{s}, err
	case "macro":
		s, err := p.parseMacro()
		return []stmt{s}, err
	case "call":
		s, err := p.parseCallBlock(t.pos)
		return []stmt{s}, err
	case "filter":
		fs, err := p.parseFilterChain(nil)
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, _, err := p.subparse("endfilter")
		if err != nil {
			return nil, err
		}
		return []stmt{&filterBlockNode{filters: fs, body: body, pos: t.pos}}, p.expectBlockEnd()
	case "generation":
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, _, err := p.subparse("endgeneration")
		if err != nil {
			return nil, err
		}
		return body, p.expectBlockEnd()
	case "with":
		n := &withNode{pos: t.pos}
		for p.cur().kind != tBlockEnd {
			if len(n.targets) > 0 {
				if err := p.expectOp(","); err != nil {
					return nil, err
				}
			}
			target, err := p.parseAssignTarget(false)
			if err != nil {
				return nil, err
			}
			if err := p.expectOp("="); err != nil {
				return nil, err
			}
			x, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			n.targets = append(n.targets, target)
			n.vals = append(n.vals, x)
		}
		p.next()
		body, _, err := p.subparse("endwith")
		if err != nil {
			return nil, err
		}
		n.body = body
		return []stmt{n}, p.expectBlockEnd()
	case "break":
		return []stmt{&breakNode{}}, p.expectBlockEnd()
	case "continue":
		return []stmt{&continueNode{}}, p.expectBlockEnd()
	}
	return nil, p.errAt(t.pos, "encountered unknown tag '%s'", t.val)
}

func (p *parser) parseIf() (stmt, error) {
	n := &ifNode{}
	for {
		c, err := p.parseTuple(false, false, nil)
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, end, err := p.subparse("elif", "else", "endif")
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, c)
		n.bodies = append(n.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.expectBlockEnd(); err != nil {
				return nil, err
			}
			n.els, _, err = p.subparse("endif")
			if err != nil {
				return nil, err
			}
		}
		return n, p.expectBlockEnd()
	}
}

func (p *parser) parseAssignTarget(allowAttr bool) (assignTarget, error) {
	var t assignTarget
	paren := p.isOp("(")
	if paren {
		p.next()
	}
	for {
		if paren || len(t.names) > 0 {
			if p.isOp("(") {
				p.depth++
				if p.depth > maxParseDepth {
					return t, p.errAt(p.cur().pos, "assignment target nested too deeply")
				}
				sub, err := p.parseAssignTarget(false)
				p.depth--
				if err != nil {
					return t, err
				}
				for len(t.nested) < len(t.names) {
					t.nested = append(t.nested, nil)
				}
				t.names = append(t.names, "")
				t.nested = append(t.nested, &sub)
				if !p.isOp(",") {
					break
				}
				p.next()
				t.tuple = true
				if paren && p.isOp(")") {
					break
				}
				continue
			}
		}
		nt, err := p.expectName()
		if err != nil {
			return t, err
		}
		t.names = append(t.names, nt.val)
		if allowAttr && !paren && len(t.names) == 1 && p.isOp(".") {
			p.next()
			at, err := p.expectName()
			if err != nil {
				return t, err
			}
			t.attr = at.val
			return t, nil
		}
		if !p.isOp(",") {
			break
		}
		p.next()
		t.tuple = true
		if paren && p.isOp(")") {
			break
		}
	}
	if paren {
		t.tuple = true
		return t, p.expectOp(")")
	}
	return t, nil
}

func (p *parser) parseFor(pos int) (stmt, error) {
	n := &forNode{pos: pos}
	var err error
	if n.target, err = p.parseAssignTarget(false); err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, p.errAt(p.cur().pos, "expected 'in', got %s", describe(p.cur()))
	}
	p.next()
	if n.iter, err = p.parseTuple(false, false, []string{"recursive"}); err != nil {
		return nil, err
	}
	if p.isName("if") {
		p.next()
		if n.cond, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	if p.isName("recursive") {
		return nil, p.errAt(p.cur().pos, "recursive for loops are not supported")
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	body, end, err := p.subparse("endfor", "else")
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if n.els, _, err = p.subparse("endfor"); err != nil {
			return nil, err
		}
	}
	return n, p.expectBlockEnd()
}

func (p *parser) parseSet(pos int) (stmt, error) {
	target, err := p.parseAssignTarget(true)
	if err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		x, err := p.parseTuple(true, false, nil)
		if err != nil {
			return nil, err
		}
		return &setNode{target: target, x: x, pos: pos}, p.expectBlockEnd()
	}
	n := &setBlockNode{target: target, pos: pos}
	if p.isOp("|") {
		if n.filters, err = p.parseFilterChain(nil); err != nil {
			return nil, err
		}
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if n.body, _, err = p.subparse("endset"); err != nil {
		return nil, err
	}
	return n, p.expectBlockEnd()
}

// parseSignature parses "(a, b=expr, ...)" into m.
func (p *parser) parseSignature(m *macro) error {
	if err := p.expectOp("("); err != nil {
		return err
	}
	for !p.isOp(")") {
		if len(m.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return err
			}
			if p.isOp(")") {
				break
			}
		}
		nt, err := p.expectName()
		if err != nil {
			return err
		}
		m.params = append(m.params, nt.val)
		var def expr
		if p.isOp("=") {
			p.next()
			if def, err = p.parseExpression(true); err != nil {
				return err
			}
		} else if len(m.defaults) > 0 && m.defaults[len(m.defaults)-1] != nil {
			return p.errAt(nt.pos, "non-default argument follows default argument")
		}
		m.defaults = append(m.defaults, def)
	}
	p.next()
	return nil
}

func (p *parser) parseMacro() (stmt, error) {
	nt, err := p.expectName()
	if err != nil {
		return nil, err
	}
	m := &macro{name: nt.val}
	if err := p.parseSignature(m); err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if m.body, _, err = p.subparse("endmacro"); err != nil {
		return nil, err
	}
	if p.cur().kind == tName {
		p.next()
	}
	return &macroNode{m: m}, p.expectBlockEnd()
}

func (p *parser) parseCallBlock(pos int) (stmt, error) {
	m := &macro{name: "caller"}
	if p.isOp("(") {
		if err := p.parseSignature(m); err != nil {
			return nil, err
		}
	}
	x, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	call, ok := x.(*callExpr)
	if !ok {
		return nil, p.errAt(pos, "expected call")
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if m.body, _, err = p.subparse("endcall"); err != nil {
		return nil, err
	}
	return &callBlockNode{call: call, caller: m, pos: pos}, p.expectBlockEnd()
}

// parseFilterChain parses "| f(args) | g" (the first "|" optional) applied to x.
func (p *parser) parseFilterChain(x expr) ([]*filterExpr, error) {
	var fs []*filterExpr
	first := true
	for first || p.isOp("|") {
		if p.isOp("|") {
			p.next()
		}
		first = false
		f, err := p.parseFilter(x)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
		x = f
	}
	return fs, nil
}

func (p *parser) parseTuple(withCond, explicit bool, extraEnd []string) (expr, error) {
	var items []expr
	isTuple := false
	for {
		if len(items) > 0 {
			if !p.isOp(",") {
				break
			}
			p.next()
		}
		if p.tupleEnd(extraEnd) || explicit && p.isOp(")") {
			break
		}
		x, err := p.parseExpression(withCond)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if p.isOp(",") {
			isTuple = true
		} else {
			break
		}
	}
	if !isTuple {
		if len(items) == 1 {
			return items[0], nil
		}
		if !explicit {
			return nil, p.errAt(p.cur().pos, "expected an expression, got %s", describe(p.cur()))
		}
	}
	return &tupleExpr{items: items}, nil
}

func (p *parser) tupleEnd(extra []string) bool {
	t := p.cur()
	switch t.kind {
	case tVarEnd, tBlockEnd, tEOF:
		return true
	case tName:
		for _, e := range extra {
			if t.val == e {
				return true
			}
		}
	}
	return false
}

func (p *parser) parseExpression(withCond bool) (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, p.errAt(p.cur().pos, "expression nested too deeply")
	}
	if withCond {
		return p.parseCondexpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondexpr() (expr, error) {
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		p.next()
		c, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var no expr
		if p.isName("else") {
			p.next()
			if no, err = p.parseExpression(true); err != nil {
				return nil, err
			}
		}
		x = &condExpr{cond: c, yes: x, no: no}
	}
	return x, nil
}

func (p *parser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isName("or") {
		p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &logicExpr{and: false, l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isName("and") {
		p.next()
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = &logicExpr{and: true, l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		t := p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxParseDepth {
			return nil, p.errAt(t.pos, "expression nested too deeply")
		}
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{op: '!', x: x, pos: t.pos}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	pos := p.cur().pos
	x, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	var ops []string
	var rest []expr
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == ">" || t.val == "<=" || t.val == ">="):
			op = t.val
			p.next()
		case t.kind == tName && t.val == "in":
			op = "in"
			p.next()
		case t.kind == tName && t.val == "not" && p.peek().kind == tName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		rest = append(rest, r)
	}
	if ops == nil {
		return x, nil
	}
	return &compareExpr{first: x, ops: ops, rest: rest, pos: pos}, nil
}

func (p *parser) parseBinary(next func() (expr, error), ops ...string) (expr, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.cur()
		if t.kind != tOp {
			return l, nil
		}
		found := false
		for _, o := range ops {
			if t.val == o {
				found = true
			}
		}
		if !found {
			return l, nil
		}
		p.next()
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = &binaryExpr{op: t.val, l: l, r: r, pos: t.pos}
	}
}

func (p *parser) parseMath1() (expr, error) {
	x, err := p.parseBinary(p.parseConcat, "+", "-")
	return flattenChain(x), err
}
func (p *parser) parseConcat() (expr, error) {
	x, err := p.parseBinary(p.parseMath2, "~")
	return flattenChain(x), err
}

// flattenChain turns a left-nested chain of "+" (or of "~") into one chainExpr, which
// concatenates strings in one allocation; other operand types fold left as before.
func flattenChain(x expr) expr {
	b, ok := x.(*binaryExpr)
	if !ok || b.op != "+" && b.op != "~" {
		return x
	}
	var items []expr
	var poss []int
	var walk func(e expr) bool
	walk = func(e expr) bool {
		if bb, ok := e.(*binaryExpr); ok && bb.op == b.op {
			if !walk(bb.l) {
				return false
			}
			items = append(items, bb.r)
			poss = append(poss, bb.pos)
			return true
		}
		if _, ok := e.(*chainExpr); ok {
			return false
		}
		items = append(items, e)
		return true
	}
	if !walk(b) || len(items) < 3 {
		return x
	}
	return &chainExpr{op: b.op, items: items, pos: poss}
}
func (p *parser) parseMath2() (expr, error) {
	return p.parseBinary(p.parsePow, "*", "/", "//", "%")
}
func (p *parser) parsePow() (expr, error) {
	return p.parseBinary(func() (expr, error) { return p.parseUnary(true) }, "**")
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	t := p.cur()
	if p.depth > maxParseDepth {
		return nil, p.errAt(t.pos, "expression nested too deeply")
	}
	var x expr
	var err error
	if t.kind == tOp && (t.val == "-" || t.val == "+") {
		p.next()
		inner, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		x = &unaryExpr{op: t.val[0], x: inner, pos: t.pos}
	} else if x, err = p.parsePrimary(); err != nil {
		return nil, err
	}
	if x, err = p.parsePostfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(x)
	}
	return x, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &literal{true}, nil
		case "false", "False":
			return &literal{false}, nil
		case "none", "None":
			return &literal{nil}, nil
		}
		return &nameExpr{name: t.val, pos: t.pos}, nil
	case tString:
		s := p.next().val
		for p.cur().kind == tString {
			s += p.next().val
		}
		return &literal{s}, nil
	case tInt:
		p.next()
		v, err := strconv.ParseInt(t.val, 0, 64)
		if err != nil {
			return nil, p.errAt(t.pos, "integer literal out of range: %s", t.val)
		}
		return &literal{int(v)}, nil
	case tFloat:
		p.next()
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) { // 1e400 is inf, as in Python
			return nil, p.errAt(t.pos, "bad float literal: %s", t.val)
		}
		return &literal{v}, nil
	case tOp:
		switch t.val {
		case "(":
			p.next()
			x, err := p.parseTuple(true, true, nil)
			if err != nil {
				return nil, err
			}
			return x, p.expectOp(")")
		case "[":
			p.next()
			var items []expr
			for !p.isOp("]") {
				if len(items) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("]") {
						break
					}
				}
				x, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				items = append(items, x)
			}
			p.next()
			return &listExpr{items: items}, nil
		case "{":
			p.next()
			d := &dictExpr{}
			for !p.isOp("}") {
				if len(d.keys) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("}") {
						break
					}
				}
				k, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
			}
			p.next()
			return d, nil
		}
	}
	return nil, p.errAt(t.pos, "unexpected %s", describe(t))
}

func (p *parser) parsePostfix(x expr) (expr, error) {
	for {
		t := p.cur()
		if t.kind != tOp {
			return x, nil
		}
		var err error
		switch t.val {
		case ".":
			p.next()
			a := p.next()
			switch a.kind {
			case tName:
				x = &getattrExpr{x: x, name: a.val, pos: a.pos}
			case tInt:
				v, _ := strconv.Atoi(a.val)
				x = &getitemExpr{x: x, key: &literal{v}, pos: a.pos}
			default:
				return nil, p.errAt(a.pos, "expected name or number after '.', got %s", describe(a))
			}
		case "[":
			p.next()
			if x, err = p.parseSubscript(x, t.pos); err != nil {
				return nil, err
			}
		case "(":
			if x, err = p.parseCall(x); err != nil {
				return nil, err
			}
		default:
			return x, nil
		}
	}
}

func (p *parser) parseSubscript(x expr, pos int) (expr, error) {
	var parts [3]expr
	n := 0
	isSlice := false
	for {
		if p.isOp(":") {
			isSlice = true
			p.next()
			n++
			if n > 2 {
				return nil, p.errAt(p.cur().pos, "too many ':' in slice")
			}
			continue
		}
		if p.isOp("]") {
			break
		}
		if parts[n] != nil {
			return nil, p.errAt(p.cur().pos, "expected ']', got %s", describe(p.cur()))
		}
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		parts[n] = e
	}
	p.next()
	if !isSlice {
		if parts[0] == nil {
			return nil, p.errAt(pos, "empty subscript")
		}
		return &getitemExpr{x: x, key: parts[0], pos: pos}, nil
	}
	return &sliceExpr{x: x, start: parts[0], stop: parts[1], step: parts[2], pos: pos}, nil
}

func (p *parser) parseCallArgs() (args []expr, kwNames []string, kwVals []expr, star, dstar expr, err error) {
	if err = p.expectOp("("); err != nil {
		return
	}
	first := true
	for !p.isOp(")") {
		if !first {
			if err = p.expectOp(","); err != nil {
				return
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		switch {
		case p.isOp("*"):
			p.next()
			if star, err = p.parseExpression(true); err != nil {
				return
			}
		case p.isOp("**"):
			p.next()
			if dstar, err = p.parseExpression(true); err != nil {
				return
			}
		case p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "=":
			name := p.next().val
			p.next()
			var v expr
			if v, err = p.parseExpression(true); err != nil {
				return
			}
			kwNames = append(kwNames, name)
			kwVals = append(kwVals, v)
		default:
			var v expr
			if v, err = p.parseExpression(true); err != nil {
				return
			}
			args = append(args, v)
		}
	}
	p.next()
	return
}

func (p *parser) parseCall(fn expr) (expr, error) {
	pos := p.cur().pos
	args, kn, kv, star, dstar, err := p.parseCallArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{fn: fn, args: args, kwNames: kn, kwVals: kv, star: star, dstar: dstar, pos: pos}, nil
}

func (p *parser) parseFilterExpr(x expr) (expr, error) {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			f, err := p.parseFilter(x)
			if err != nil {
				return nil, err
			}
			x = f
		case p.isName("is"):
			p.next()
			t, err := p.parseTest(x)
			if err != nil {
				return nil, err
			}
			x = t
		case p.isOp("("):
			c, err := p.parseCall(x)
			if err != nil {
				return nil, err
			}
			x = c
		default:
			return x, nil
		}
	}
}

func (p *parser) parseFilter(x expr) (*filterExpr, error) {
	nt, err := p.expectName()
	if err != nil {
		return nil, err
	}
	name := nt.val
	for p.isOp(".") {
		p.next()
		more, err := p.expectName()
		if err != nil {
			return nil, err
		}
		name += "." + more.val
	}
	f := &filterExpr{x: x, name: name, pos: nt.pos}
	if p.isOp("(") {
		args, kn, kv, star, dstar, err := p.parseCallArgs()
		if err != nil {
			return nil, err
		}
		if star != nil || dstar != nil {
			return nil, p.errAt(nt.pos, "*args in filter calls are not supported")
		}
		f.args, f.kwNames, f.kwVals = args, kn, kv
	}
	return f, nil
}

func (p *parser) parseTest(x expr) (expr, error) {
	negate := false
	if p.isName("not") {
		p.next()
		negate = true
	}
	nt, err := p.expectName()
	if err != nil {
		return nil, err
	}
	t := &testExpr{x: x, name: nt.val, negate: negate, pos: nt.pos}
	c := p.cur()
	switch {
	case p.isOp("("):
		args, _, _, _, _, err := p.parseCallArgs()
		if err != nil {
			return nil, err
		}
		t.args = args
	case c.kind == tName && c.val != "else" && c.val != "or" && c.val != "and" && c.val != "is",
		c.kind == tString, c.kind == tInt, c.kind == tFloat,
		c.kind == tOp && (c.val == "[" || c.val == "{"):
		a, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if a, err = p.parsePostfix(a); err != nil {
			return nil, err
		}
		t.args = []expr{a}
	}
	return t, nil
}
