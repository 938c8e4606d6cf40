package jinja

import (
	"strings"
	"testing"
)

// FuzzRender parses and renders arbitrary templates over arbitrary JSON messages under
// small limits. Any outcome is fine except a panic (Render turns one into an
// "internal error") or output beyond the limit.
func FuzzRender(f *testing.F) {
	msgs := `[{"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "assistant", "content": "x</think>y", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}]`
	for _, s := range []string{
		"{% for m in messages %}{{ m.role | upper }}{{ m.content if m.content is string else m.content | tojson(indent=2) }}{% endfor %}",
		"{% set ns = namespace(i=0) %}{% for m in messages[::-1] if m.role != 'tool' %}{% set ns.i = loop.index %}{% endfor %}{{ ns.i }}",
		"{% macro f(x, y=2) %}{{ x * y }}{% endmacro %}{{ f(3) }}{{ f(*[1, 2]) }}{{ f(**{'x': 'a'}) }}",
		"{{ messages[2].content.split('</think>')[0].strip() }}{{ '%s=%d' % ('a', 1) }}{{ '{}-{:>5}'.format(1, 'b') }}",
		"{%- if messages|length > 1 -%}\n  {{- raise_exception('x') if false }}{% else %}{% break %}{% endif %}",
		"{% raw %}{{{% endraw %}{# c #}{% filter upper %}a{% endfilter %}{% set x %}b{% endset %}{{ x }}",
		"{{ (messages | map(attribute='role') | unique | list | sort | join(',')) ~ (1, 2) ~ {'a': none} }}",
	} {
		f.Add(s, msgs)
	}
	f.Fuzz(func(t *testing.T, src, data string) {
		tp, err := Parse(src)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Parse(%q) panicked: %v", src, err)
			}
			return
		}
		var messages any
		if v, err := ParseJSON([]byte(data)); err == nil {
			messages = v
		}
		lim := Limits{MaxSteps: 10000, MaxDepth: 20, MaxOutput: 1 << 20}
		out, err := tp.Render(map[string]any{"messages": messages, "add_generation_prompt": true}, lim)
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("Render(%q) panicked: %v", src, err)
		}
		if len(out) > lim.MaxOutput {
			t.Fatalf("Render(%q) wrote %d bytes, limit %d", src, len(out), lim.MaxOutput)
		}
	})
}
