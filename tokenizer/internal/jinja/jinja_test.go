package jinja

import (
	"strings"
	"testing"
)

func render(t *testing.T, src string, vars map[string]any) string {
	t.Helper()
	tp, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	out, err := tp.Render(vars, Limits{})
	if err != nil {
		t.Fatalf("Render(%q): %v", src, err)
	}
	return out
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Expected outputs are what Python's jinja2 produces with transformers' settings
// (trim_blocks, lstrip_blocks, no trailing newline) and transformers' tojson.
func TestRender(t *testing.T) {
	d := mustJSON(t, `{"b": 1, "a": [1, 2.5, "x"], "s": "Hi There", "n": null, "t": true}`)
	vars := map[string]any{"d": d, "msgs": mustJSON(t, `[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]`)}
	cases := []struct{ src, want string }{
		{"a\n", "a"},
		{"a\n\n", "a\n"},
		{"{{ 1 + 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % -3 }}|{{ 1 / 2 }}|{{ 2 ** 10 }}", "3|3|-4|-2|0.5|1024"},
		{"{{ none }}{{ true }}{{ d.n }}{{ d.t }}", "NoneTrueNoneTrue"},
		{"{{ d.a }}", "[1, 2.5, 'x']"},
		{"{{ d }}", "{'b': 1, 'a': [1, 2.5, 'x'], 's': 'Hi There', 'n': None, 't': True}"},
		{"{{ d | tojson }}", `{"b": 1, "a": [1, 2.5, "x"], "s": "Hi There", "n": null, "t": true}`},
		{"{{ d.a | tojson(indent=2) }}", "[\n  1,\n  2.5,\n  \"x\"\n]"},
		{"{{ d | tojson(indent=2) }}", "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2.5,\n    \"x\"\n  ],\n  \"s\": \"Hi There\",\n  \"n\": null,\n  \"t\": true\n}"},
		{"{{ 'é\"\\n' | tojson }}", `"é\"\n"`},
		{"{% for m in msgs %}\n  {{ m.role }}:{{ m['content'] }}\n{% endfor %}", "  user:hi\n  assistant:yo\n"},
		{"  {% if true %}\nx\n  {% endif %}\ny", "x\ny"},
		{"a {% if true %} b {% endif %} c", "a  b  c"},
		{"a\n  {%- if true -%}\n  b\n  {%- endif %}\nc", "abc"},
		{"{% for x in [1,2,3,4] if x is even %}{{ x }}{{ loop.index }}/{{ loop.length }}{% if not loop.last %},{% endif %}{% endfor %}", "21/2,42/2"},
		{"{% for x in [] %}a{% else %}empty{% endfor %}", "empty"},
		{"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", "b=1;a=[1, 2.5, 'x'];s=Hi There;n=None;t=True;"},
		{"{% set ns = namespace(x=0) %}{% for i in range(5) %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}", "10"},
		{"{% set x = 1 %}{% for i in range(2) %}{% set x = 5 %}{% endfor %}{{ x }}", "1"},
		{"{{ msgs[::-1][0].role }}|{{ d.a[1:] }}|{{ 'hello'[1:3] }}|{{ d.a.0 }}|{{ d.a[-1] }}", "assistant|[2.5, 'x']|el|1|x"},
		{"{{ ' a b '.strip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'x</think>y'.split('</think>')[-1] }}", "a b|['a', 'b', '', 'c']|['a', 'b']|y"},
		{"{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x','c')) }}{{ 'hi {}!'.format('you') }}{{ 'AbC'.lower() }}{{ 'ab'.upper() }}", "TrueTruehi you!abcAB"},
		{"{{ 'x' if false }}|{{ 'y' if false else 'z' }}|{{ (1 if true else 2) }}", "|z|1"},
		{"{{ undefined_var }}|{{ undefined_var is defined }}|{{ d.missing is defined }}|{{ d.n is none }}|{{ d.s is string }}|{{ d is mapping }}", "|False|False|True|True|True"},
		{"{{ [3,1,2] | sort | join(',') }}|{{ ['b','A','a'] | unique | list }}|{{ msgs | map(attribute='role') | join(' ') }}|{{ msgs | selectattr('role', 'equalto', 'user') | list | length }}", "1,2,3|['b', 'A']|user assistant|1"},
		{"{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}", "a\n  b\n\n  c|  a\n  b"},
		{"{% macro f(a, b='B') %}[{{ a }}{{ b }}]{% endmacro %}{{ f(1) }}{{ f(1, b=2) }}{{ f(*[3, 4]) }}", "[1B][12][34]"},
		{"{% filter upper %}abc{% endfilter %}{% set s %}x{{ 1 }}{% endset %}{{ s }}", "ABCx1"},
		{"{% for i in range(10) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}", "02"},
		{"{{ 'a' ~ 1 ~ none }}|{{ 1.0 }}|{{ 1e20 }}|{{ 0.0001 }}|{{ 3 * 'ab' }}", "a1None|1.0|1e+20|0.0001|ababab"},
		{"{{ 'x' in 'xyz' }}{{ 1 in [1,2] }}{{ 'b' in d }}{{ 'q' not in d }}{{ 1 < 2 < 3 }}", "TrueTrueTrueTrueTrue"},
		{"{{ d | dictsort | first }}|{{ d.s | title }}|{{ 'hello world' | capitalize }}|{{ '  x ' | trim }}|{{ 3.7 | int }}|{{ '4' | float }}|{{ 2.5 | round }}", "['a', [1, 2.5, 'x']]|Hi There|Hello world|x|3|4.0|3.0"},
		{"{% generation %}gen{% endgeneration %}", "gen"},
		{"{# comment #}\nA{#- c -#}  B", "AB"},
		{"{% raw %}{{ x }}{% endraw %}", "{{ x }}"},
		{"{{ '%s-%d' % ('a', 3) }}|{{ '%.2f' | format(1.5) }}", "a-3|1.50"},
		{"{{ \"it's\" }}|{{ [\"it's\"] }}|{{ ['a\\nb'] }}", "it's|[\"it's\"]|['a\\nb']"},
		{"{{ x | default('dflt') }}|{{ '' | default('e', true) }}|{{ [1,2] | last }}|{{ [1,2,3] | reverse | list }}", "dflt|e|2|[3, 2, 1]"},
	}
	for _, c := range cases {
		if got := render(t, c.src, vars); got != c.want {
			t.Errorf("render(%q)\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{% if x %}", "line 1"},
		{"{{ x | nosuchfilter }}", "no filter named 'nosuchfilter'"},
		{"a\n{% for %}", "line 2"},
		{"{{ x is nosuchtest }}", "no test named 'nosuchtest'"},
		{"{{ [].append(1) }}", "unsafe"},
		{"{{ 'a' + 1 }}", "can only concatenate"},
		{"{{ undefined_thing.attr }}", "'undefined_thing' is undefined"},
		{"{% for i in range(1000000) %}{% endfor %}", "Range too big"},
		{"{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "nested deeper"},
		{"{% include 'x' %}", "unknown tag 'include'"},
		{"{{ (((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1 }}", "too deeply"},
	}
	for _, c := range cases {
		tp, err := Parse(c.src)
		if err == nil {
			_, err = tp.Render(nil, Limits{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want one containing %q", c.src, err, c.want)
		}
	}
}
