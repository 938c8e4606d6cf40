// Package jinja is a small Jinja2 engine for model chat templates. It implements the
// subset of Jinja2 that Hugging Face chat templates use, configured exactly as
// transformers configures jinja2 for apply_chat_template: an immutable sandbox with
// trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False and the loopcontrols
// extension (break/continue), plus transformers' {% generation %} block.
//
// Values follow Python semantics: nil is None, int and float64 are numbers, string,
// []any is a list, [Tuple] a tuple, *[Dict] an insertion-ordered dict (so tojson and
// items() keep key order), and [Undefined] a missing variable or attribute. Output of
// {{ x }} is Python's str(x): None prints "None", True prints "True", lists print their
// repr. Errors follow Python too: "a" + 1 fails, a list method that would modify the list
// is refused as the sandbox refuses it.
//
//	t, err := jinja.Parse(src)
//	out, err := t.Render(map[string]any{"messages": msgs}, jinja.Limits{})
//
// The tests compare the engine with Python's jinja2 (set up as transformers sets it up)
// on thousands of generated expressions and whitespace cases, and on real model
// templates; see tokenizer/testdata/chat/python_oracle.py.
//
// Not supported (errors, never a different text): template inheritance and inclusion
// (extends, include, import, block), {% do %}, recursive for loops, autoescaping,
// integers beyond 64 bits, \N{NAME} string escapes. Rendering is bounded by [Limits] and
// never panics on any template or input.
package jinja
