package jinja

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// matrixValues × matrixOps are expressions whose rendering (or failure) must match
// Python jinja2's: every value kind through every filter, test and common method.
var matrixValues = []string{
	`'Hello World'`, `'  a b\n c  '`, `'x'`, `''`, `'ÉtÉ über'`, `'<b>x</b>'`,
	`[3, 1, 2]`, `['b', 'A', 'a']`, `[]`, `[[1, 'a'], [0, 'b']]`, `[{'k': 1, 'n': 'x'}, {'k': 0, 'n': 'y'}]`,
	`{'b': 1, 'a': 2}`, `{}`, `(1, 'a')`, `none`, `true`, `false`, `0`, `7`, `-2.5`, `1.0`, `undefined_var`,
}

var matrixOps = []string{
	"{{ V }}", "{{ V | length }}", "{{ V | first }}", "{{ V | last }}", "{{ V | list }}",
	"{{ V | sort }}", "{{ V | sort(reverse=true) }}", "{{ V | reverse | list }}", "{{ V | unique | list }}",
	"{{ V | join(',') }}", "{{ V | tojson }}", "{{ V | tojson(indent=2) }}", "{{ V | string }}",
	"{{ V | upper }}", "{{ V | lower }}", "{{ V | title }}", "{{ V | capitalize }}", "{{ V | trim }}",
	"{{ V | int }}", "{{ V | float }}", "{{ V | abs }}", "{{ V | default('d') }}", "{{ V | default('d', true) }}",
	"{{ V | items | list }}", "{{ V | dictsort }}", "{{ V | sum }}", "{{ V | min }}", "{{ V | max }}",
	"{{ V | select | list }}", "{{ V | reject | list }}", "{{ V | map('string') | list }}", "{{ V | count }}",
	"{{ V | wordcount }}", "{{ V | striptags }}", "{{ V | indent(2) }}", "{{ V | round }}", "{{ V | e }}",
	"{{ V | batch(2) | list }}", "{{ V | map(attribute='k') | list }}", "{{ V | selectattr('k') | list }}",
	"{{ V | sort(attribute='k') }}", "{{ V | replace('a', 'Z') }}", "{{ V | center(9) }}",
	"{{ V is defined }}", "{{ V is none }}", "{{ V is string }}", "{{ V is number }}", "{{ V is integer }}",
	"{{ V is float }}", "{{ V is mapping }}", "{{ V is iterable }}", "{{ V is sequence }}", "{{ V is boolean }}",
	"{{ V is true }}", "{{ V is false }}", "{{ V is odd }}", "{{ V is lower }}", "{{ V is upper }}",
	"{{ V is callable }}", "{{ V is in [1, 'x', 0] }}", "{{ V is eq 7 }}",
	"{{ V ~ '|' }}", "{{ V + V }}", "{{ V * 2 }}", "{{ V == V }}", "{{ V < 1 }}", "{{ 'a' in V }}", "{{ 1 in V }}",
	"{{ V[0] }}", "{{ V[1:] }}", "{{ V[::-1] }}", "{{ V.k }}", "{{ V['a'] }}", "{{ V.0 }}", "{{ not V }}",
	"{{ V if V else 'falsy' }}", "{% for x in V %}{{ x }};{% else %}empty{% endfor %}",
	"{{ V.strip() }}", "{{ V.split() }}", "{{ V.upper() }}", "{{ V.startswith('H') }}", "{{ V.title() }}",
	"{{ V.items() | list }}", "{{ V.keys() | list }}", "{{ V.get('a') }}", "{{ V.count(1) }}", "{{ V.index(1) }}",
	"{{ V.replace(' ', '_') }}", "{{ V.split(' ') }}", "{{ V.lstrip() }}", "{{ V.endswith('d') }}",
	"{{ 2 * V }}", "{{ V | tojson(sort_keys=true) }}", "{{ V | join(', ', attribute='n') }}", "{{ V | list | length }}",
	"{{ V | dictsort(reverse=true) }}", "{{ V | sort(case_sensitive=true) }}", "{{ V | unique(attribute='k') | list }}",
	"{{ V | rejectattr('k', 'eq', 0) | list }}", "{{ V.split(',') }}", "{{ V | first is string }}", "{{ V | min(attribute='k') }}",
	"{{ V | truncate(9) }}", "{{ V | truncate(5, true, '~', 0) }}", "{{ V | slice(2) | list }}", "{{ V | slice(2, 'F') | list }}",
	"{{ V | groupby('k') }}", "{% for g in V | groupby('n') %}{{ g.grouper }}:{{ g.list | length }};{% endfor %}",
	"{{ V | filesizeformat }}", "{{ V | filesizeformat(true) }}",
	"{{ '%s' % V }}", "{{ '{}'.format(V) }}", "{{ V | format }}", "{{ -V }}", "{{ V // 2 }}", "{{ V % 2 }}",
}

func TestMatrixMatchesPython(t *testing.T) {
	if testutil.Short() {
		t.Skip("optional Python cross-check skipped in -short mode")
	}
	py := testutil.Python(t, "jinja2")
	var srcs []string
	for _, v := range matrixValues {
		for _, op := range matrixOps {
			srcs = append(srcs, strings.ReplaceAll(op, "V", v))
		}
	}
	srcs = append(srcs, literalCases...)
	pairValues := []string{`'x'`, `''`, `[3, 1, 2]`, `[]`, `{'b': 1, 'a': 2}`, `(1, 'a')`, `none`, `true`, `0`, `7`, `-2.5`, `undefined_var`}
	for _, a := range pairValues {
		for _, b := range pairValues {
			for _, op := range []string{"+", "-", "==", "!=", "<", ">=", "in", "not in", "~", "and", "or", "*", "//"} {
				srcs = append(srcs, "{{ "+a+" "+op+" "+b+" }}")
			}
		}
	}
	var jobs []map[string]any
	for _, s := range srcs {
		jobs = append(jobs, map[string]any{"template": s, "contexts": []json.RawMessage{json.RawMessage(`{}`)}})
	}
	req, _ := json.Marshal(map[string]any{"now": "2024-07-26T00:00:00Z", "jobs": jobs})
	cmd := exec.Command(py, "../../testdata/chat/python_oracle.py")
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python oracle: %v", err)
	}
	var res [][]struct {
		Out   *string `json:"out"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	same, bothFail := 0, 0
	for i, s := range srcs {
		want := res[i][0]
		got, err := Render(s, nil)
		switch {
		case want.Out == nil && err != nil:
			bothFail++
		case want.Out == nil:
			t.Errorf("%s: python fails (%s), we render %q", s, want.Error, got)
		case err != nil:
			t.Errorf("%s: we fail (%v), python renders %q", s, err, *want.Out)
		case got != *want.Out:
			t.Errorf("%s: got %q, python %q", s, got, *want.Out)
		default:
			same++
		}
	}
	t.Logf("%d expressions: %d identical, %d failing in both", len(srcs), same, bothFail)
}

// TestWhitespaceMatrixMatchesPython renders every combination of tag kind, left and right
// whitespace modifiers and surrounding text through both engines.
func TestWhitespaceMatrixMatchesPython(t *testing.T) {
	if testutil.Short() {
		t.Skip("optional Python cross-check skipped in -short mode")
	}
	py := testutil.Python(t, "jinja2")
	contexts := []string{"", "\n", "  ", "\n  ", " \t\n\n", "a\n  b  "}
	var srcs []string
	for _, kind := range []string{"block", "comment", "var", "raw"} {
		for _, lm := range []string{"", "-", "+"} {
			for _, rm := range []string{"", "-", "+"} {
				var tag string
				switch kind {
				case "block":
					tag = "{%" + lm + " if true " + rm + "%}T{%" + lm + " endif " + rm + "%}"
				case "comment":
					tag = "{#" + lm + " c " + rm + "#}"
				case "var":
					tag = "{{" + lm + " 'v' " + rm + "}}"
				case "raw":
					tag = "{%" + lm + " raw " + rm + "%} r {%" + lm + " endraw " + rm + "%}"
				}
				for _, before := range contexts {
					for _, after := range contexts {
						srcs = append(srcs, before+tag+after, before+tag+after+tag+before)
					}
				}
			}
		}
	}
	var jobs []map[string]any
	for _, s := range srcs {
		jobs = append(jobs, map[string]any{"template": s, "contexts": []json.RawMessage{json.RawMessage(`{}`)}})
	}
	req, _ := json.Marshal(map[string]any{"now": "2024-07-26T00:00:00Z", "jobs": jobs})
	cmd := exec.Command(py, "../../testdata/chat/python_oracle.py")
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python oracle: %v", err)
	}
	var res [][]struct {
		Out   *string `json:"out"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	same, bothFail := 0, 0
	for i, s := range srcs {
		want := res[i][0]
		got, err := Render(s, nil)
		switch {
		case want.Out == nil && err != nil:
			bothFail++
		case want.Out == nil:
			t.Errorf("%q: python fails (%s), we render %q", s, want.Error, got)
		case err != nil:
			t.Errorf("%q: we fail (%v), python renders %q", s, err, *want.Out)
		case got != *want.Out:
			t.Errorf("%q: got %q, python %q", s, got, *want.Out)
		default:
			same++
		}
	}
	t.Logf("%d templates: %d identical, %d failing in both", len(srcs), same, bothFail)
}

// literalCases exercise the lexer: number forms, string escapes, names and keywords.
// Known limits, left out (each is an error here, never a different text): integers
// beyond 64 bits (Python's are unbounded), \N{NAME} escapes, attributes of numbers
// such as .real.
var literalCases = []string{
	"{{ 1_000 }}", "{{ 9223372036854775807 }}", "{{ 0x1F }}", "{{ 0o17 }}", "{{ 0b101 }}", "{{ 1e3 }}", "{{ 1E-2 }}", "{{ 2.5e+3 }}", "{{ 1. }}",
	"{{ .5 }}", "{{ 007 }}", "{{ 1__0 }}", "{{ 3.14_15 }}", "{{ -0.0 }}", "{{ 1e400 }}",
	`{{ '\u00e9\x41\101\q' }}`, `{{ "a\"b" }}`, `{{ 'a\'b' }}`, `{{ '\\' }}`, `{{ 'tab\there' }}`,
	`{{ 'multi
line' }}`, "{{ True }}{{ False }}{{ None }}{{ TRUE }}", "{{ none is none }}{{ NONE is defined }}",
	"{{ [1, 2,] }}{{ {'a': 1,} }}{{ (1, 2,) }}{{ (1) }}{{ () }}", "{{ 1 if true }}", "{{ [] if false }}",
	"{{ 'a' 'b' \"c\" }}", "{{ 'x'[0] }}{{ 'xy'.0 }}", "{{ 1.5.0 }}", "{{ 2 ** 0.5 }}",
	"{{ 7 / 0 }}", "{{ 7 // 0 }}", "{{ 7 % 0 }}", "{{ -7 // 2.0 }}", "{{ 7.5 % 2 }}", "{{ -7.5 % 2 }}", "{{ 1 / 3 * 3 }}",
	"{{ 0.1 * 3 }}", "{{ 1e16 }}", "{{ 1e15 + 0.5 }}", "{{ 123456789.123456789 }}", "{{ 5e-324 }}", "{{ 2 ** 62 }}",
	"{{ 'abc' * -1 }}", "{{ [1] * 0 }}", "{{ true + true }}", "{{ 'é' | length }}", "{{ '👩‍💻' | length }}", "{{ '日本'[1] }}",
}

// statementCases exercise statements: scoping, loops, macros, call blocks, set blocks.
var statementCases = []string{
	"{% set x = 1 %}{% for i in [1] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}",
	"{% for i in [1, 2] %}{% if i == 2 %}{{ y }}{% endif %}{% set y = i %}{% endfor %}|{{ y }}",
	"{% for i in [1, 2] %}{% for j in 'ab' %}{{ loop.index }}{{ i }}{{ j }}{% if loop.last %};{% endif %}{% endfor %}{{ loop.index }}{% endfor %}",
	"{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}{% for k, v in {'b': 1}.items() %}{{ k }}{{ v }}{% endfor %}",
	"{% for x in [1, 2, 3] if x > 5 %}{{ x }}{% else %}none{% endfor %}",
	"{% for x in [1, 2, 3] if x > 1 %}{{ loop.index }}/{{ loop.length }}{{ loop.first }}{{ loop.last }}{% endfor %}",
	"{% for x in [] %}{% else %}{{ loop is defined }}{% endfor %}",
	"{% for x in range(3) %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}",
	"{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% else %}E{% endfor %}",
	"{% for x in range(2) %}{% for y in range(3) %}{% if y == 1 %}{% break %}{% endif %}{{ x }}{{ y }}{% endfor %}{% endfor %}",
	"{% set ns = namespace(a=[], n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% set ns.a = ns.a + [i] %}{% endfor %}{{ ns.n }}{{ ns.a }}",
	"{% set ns = namespace({'x': 1}, y=2) %}{{ ns.x }}{{ ns.y }}{{ ns.z is defined }}",
	"{% macro m(a, b=a * 2, c='C') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }}|{{ m(1, c=3) }}|{{ m(b=5, a=4) }}",
	"{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}",
	"{% macro m() %}{{ caller('x', 2) }}{% endmacro %}{% call(p, q) m() %}[{{ p }}{{ q }}]{% endcall %}",
	"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}",
	"{% set x = 'outer' %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 'later' %}{{ m() }}",
	"{% macro m() %}{% set x = 'inner' %}{{ x }}{% endmacro %}{% set x = 'outer' %}{{ m() }}{{ x }}",
	"{% set s | upper %}ab{{ 'c' }}{% endset %}{{ s }}{% set t %}  t  {% endset %}[{{ t }}]",
	"{% filter upper | replace('A', '4') %}abc{% endfilter %}",
	"{% if false %}a{% elif none %}b{% elif 0 %}c{% else %}d{% endif %}{% if [] %}x{% elif {} %}y{% endif %}",
	"{% set a, b = 'xy' %}{{ b }}{{ a }}{% set c, d = [1, 2] %}{{ c + d }}",
	"{% for a, b in [('x', 1), ('y', 2)] %}{{ a }}={{ b }} {% endfor %}",
	"{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}",
	"{% set j = joiner('|') %}{% for x in 'abc' %}{{ j() }}{{ x }}{% endfor %}{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.current }}{{ c.next() }}{{ c.reset() }}{{ c.current }}",
	"{% for g, items in [{'c': 'B', 'v': 1}, {'c': 'a', 'v': 2}, {'c': 'b', 'v': 3}] | groupby('c') %}{{ g }}={{ items | map(attribute='v') | list }};{% endfor %}",
	"{{ [{'c': 'B'}, {'c': 'b'}, {}] | groupby('c', default='z', case_sensitive=true) }}",
	"{% set a = 5 %}{% with a = 1, b = a %}{{ a }}{{ b }}{% endwith %}{{ a }}",
	"{% with %}{% set x = 1 %}{{ x }}{% endwith %}{{ x }}{% with a, b = [1, 2] %}{{ a }}{{ b }}{% endwith %}",
	"{% for x in [1, 1, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}",
	"{{ 'Hello big wide world' | truncate(12) }}|{{ 'Hello big wide world' | truncate(12, leeway=0) }}|{{ 123456789 | filesizeformat }}|{{ 1 | filesizeformat }}|{{ 10 ** 30 | filesizeformat }}",
	"{{ messages is defined }}{{ range(3) | list }}{{ range(1, 10, 3) | list }}{{ range(5, 0, -2) | list }}",
	"{% set d = dict(a=1, b=2) %}{{ d }}{{ dict() }}{{ namespace() is defined }}",
	"{% for m in [{'role': 'user'}, {'role': 'tool'}] %}{% if m.role != 'tool' %}{{ m.role }}{% endif %}{{ loop.cycle('a', 'b') }}{% endfor %}",
	"{%- for i in range(3) -%}\n  {{ i }}\n{%- endfor %}",
	"{% for i in range(2) %}\n  {% if i %}\n    x{{ i }}\n  {% endif %}\n{% endfor %}",
	"{% macro m(x) -%}\n  [{{ x }}]\n{%- endmacro %}\n{{ m(1) }}\n{{ m(2) }}",
	"{% generation %}\n  gen {{ 1 }}\n{% endgeneration %}\n",
	"{{ raise_exception('boom') if false }}ok",
	"{% if true %}{{ raise_exception('custom: ' ~ 42) }}{% endif %}",
	"{% set x = [1, 2] %}{% set y = x %}{{ y is sameas x }}{{ [1] is sameas [1] }}{{ none is sameas none }}",
}

func TestStatementsMatchPython(t *testing.T) {
	if testutil.Short() {
		t.Skip("optional Python cross-check skipped in -short mode")
	}
	py := testutil.Python(t, "jinja2")
	var jobs []map[string]any
	for _, s := range statementCases {
		jobs = append(jobs, map[string]any{"template": s, "contexts": []json.RawMessage{json.RawMessage(`{"messages": []}`)}})
	}
	req, _ := json.Marshal(map[string]any{"now": "2024-07-26T00:00:00Z", "jobs": jobs})
	cmd := exec.Command(py, "../../testdata/chat/python_oracle.py")
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python oracle: %v", err)
	}
	var res [][]struct {
		Out   *string `json:"out"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	raise := Func(func(args []any, _ *Dict) (any, error) { return nil, &RaiseError{Msg: toStr(args[0])} })
	for i, s := range statementCases {
		want := res[i][0]
		got, err := Render(s, map[string]any{"messages": []any{}, "raise_exception": raise})
		switch {
		case want.Out == nil && err != nil:
			if strings.HasPrefix(want.Error, "TemplateError: ") && !strings.Contains(err.Error(), strings.TrimPrefix(want.Error, "TemplateError: ")) {
				t.Errorf("%q: raised %v, python raised %s", s, err, want.Error)
			}
		case want.Out == nil:
			t.Errorf("%q: python fails (%s), we render %q", s, want.Error, got)
		case err != nil:
			t.Errorf("%q: we fail (%v), python renders %q", s, err, *want.Out)
		case got != *want.Out:
			t.Errorf("%q:\n got %q\nwant %q", s, got, *want.Out)
		}
	}
}
