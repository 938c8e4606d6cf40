package jinja

import (
	"strings"
)

func (r *renderer) runTest(name string, v any, args []any) (bool, error) {
	if len(args) > 0 && noArgTests[name] {
		return false, errorf("test_%s() takes 1 positional argument but %d were given", name, len(args)+1)
	}
	arg := func() (any, error) {
		if len(args) == 0 {
			return nil, errorf("test '%s' needs an argument", name)
		}
		return args[0], nil
	}
	switch name {
	case "defined":
		_, u := v.(Undefined)
		return !u, nil
	case "undefined":
		_, u := v.(Undefined)
		return u, nil
	case "none":
		return v == nil, nil
	case "boolean":
		_, ok := v.(bool)
		return ok, nil
	case "true":
		b, ok := v.(bool)
		return ok && b, nil
	case "false":
		b, ok := v.(bool)
		return ok && !b, nil
	case "string":
		_, ok := v.(string)
		return ok, nil
	case "number":
		return isNumber(v), nil
	case "integer":
		_, ok := v.(int)
		return ok, nil
	case "float":
		_, ok := v.(float64)
		return ok, nil
	case "mapping":
		_, ok := v.(*Dict)
		return ok, nil
	case "iterable":
		switch unTuple(v).(type) {
		case string, []any, *Dict, Undefined:
			return true, nil
		}
		return false, nil
	case "sequence":
		switch unTuple(v).(type) {
		case string, []any, *Dict, Undefined:
			return true, nil
		}
		return false, nil
	case "callable":
		switch v.(type) {
		case Func, builtinFunc, *macroVal, boundMethod, Undefined, *cycler:
			return true, nil
		}
		return false, nil
	case "odd", "even":
		m, err := r.binop("%", v, 2)
		if err != nil {
			return false, err
		}
		if name == "odd" {
			return equal(m, 1), nil
		}
		return equal(m, 0), nil
	case "divisibleby":
		a, err := arg()
		if err != nil {
			return false, err
		}
		m, err := r.binop("%", v, a)
		if err != nil {
			return false, err
		}
		return equal(m, 0), nil
	case "eq", "equalto", "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=":
		a, err := arg()
		if err != nil {
			return false, err
		}
		op := map[string]string{"eq": "==", "equalto": "==", "ne": "!=", "lt": "<", "lessthan": "<",
			"le": "<=", "gt": ">", "greaterthan": ">", "ge": ">="}[name]
		if op == "" {
			op = name
		}
		return compareOp(op, v, a)
	case "in":
		a, err := arg()
		if err != nil {
			return false, err
		}
		return contains(a, v)
	case "sameas":
		a, err := arg()
		if err != nil {
			return false, err
		}
		switch x := v.(type) {
		case nil, bool:
			return v == a, nil
		case []any:
			y, ok := a.([]any)
			return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0]), nil
		case *Dict, *namespace:
			return v == a, nil
		}
		return equal(v, a), nil
	case "lower":
		s := toStr(v)
		return s == strings.ToLower(s) && strings.IndexFunc(s, isCased) >= 0, nil
	case "upper":
		s := toStr(v)
		return s == strings.ToUpper(s) && strings.IndexFunc(s, isCased) >= 0, nil
	case "escaped":
		return false, nil
	case "filter":
		s, _ := v.(string)
		return knownFilters[s], nil
	case "test":
		s, _ := v.(string)
		return knownTests[s], nil
	}
	return false, errorf("no test named '%s'", name)
}

var knownTests = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`defined undefined none boolean true false string number integer
		float mapping iterable sequence callable odd even divisibleby eq equalto ne lt lessthan le gt
		greaterthan ge in sameas lower upper escaped filter test`) {
		knownTests[n] = true
	}
}

// noArgTests are the tests that take no argument besides the value.
var noArgTests = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`defined undefined none boolean true false string number integer
		float mapping iterable sequence callable odd even lower upper escaped filter test`) {
		noArgTests[n] = true
	}
}
