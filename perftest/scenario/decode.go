package scenario

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
)

// FileError is one problem of a scenario file, at a position in it.
type FileError struct {
	File      string
	Line, Col int    // 1-based
	Path      string // the field, e.g. "mock.ttft_ms"; "" for the document
	Msg       string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Unwrap returns [ErrInvalidScenario].
func (e *FileError) Unwrap() error { return ErrInvalidScenario }

// Enums are the fields with a fixed set of values, checked when a file is read, by
// their path in the file. The lists are loadgen's, which Config.Validate checks too.
var Enums = map[string][]string{
	"endpoint_type": loadgen.Endpoints,
	"corpus":        loadgen.Corpora,
	"arrival":       loadgen.Arrivals,
	"input_format":  loadgen.InputFormats,
	"routing":       loadgen.Routings,
	"osl_field":     loadgen.OSLFields,
	"exports.level": ExportLevels,
}

// renamed reads the names earlier scenario files used where the meaning is unchanged:
// a top-level "endpoint" URL is "urls": [URL], and "use_server_token_count" sets
// "usage_osl" and "usage_isl". The "client" block is refused, naming where each of
// its fields is now (fail gets the node and the message) — unless legacy is set, as for
// the scenario.json of older runs, whose client mapping is then read at the top level
// (where the top level does not set them; its "stream" and "urls" were never used).
// Anything else renamed cannot read goes to fail, legacy or not.
func renamed(root *node, legacy bool, fail func(n *node, msg string)) {
	if root == nil || root.kind != 'm' {
		return
	}
	has := func(name string) bool {
		for _, k := range root.keys {
			if k.text == name {
				return true
			}
		}
		return false
	}
	var keys, vals []*node
	for i, k := range root.keys {
		v := root.vals[i]
		switch k.text {
		case "endpoint":
			if v.kind == 'v' && v.quoted {
				if has("urls") {
					fail(k, `"endpoint" and "urls" both set: "endpoint: URL" is the old spelling of "urls: [URL]"; keep one`)
					continue
				}
				k = &node{line: k.line, col: k.col, kind: 'v', v: "urls", text: "urls", quoted: true}
				v = &node{line: v.line, col: v.col, kind: 's', items: []*node{v}}
			}
		case "use_server_token_count":
			for _, name := range []string{"usage_osl", "usage_isl"} {
				if !has(name) {
					keys = append(keys, &node{line: k.line, col: k.col, kind: 'v', v: name, text: name, quoted: true})
					vals = append(vals, v)
				}
			}
			continue
		case "client":
			if legacy && v.kind == 'm' {
				for j, ck := range v.keys {
					name := ck.text
					switch name {
					case "endpoint":
						name = "endpoint_type"
					case "stream", "urls":
						continue
					}
					if !has(name) {
						keys = append(keys, &node{line: ck.line, col: ck.col, kind: 'v', v: name, text: name, quoted: true})
						vals = append(vals, v.vals[j])
					}
				}
				continue
			}
			if v.kind == 'm' {
				for j, ck := range v.keys {
					to := ck.text
					switch to {
					case "endpoint":
						to = "endpoint_type"
					case "stream":
						to = "no_stream (streaming is on by default)"
					}
					fail(ck, fmt.Sprintf("client.%s: the client block is gone; its fields are top-level: write %q at the top level", ck.text, to))
					_ = j
				}
				if len(v.keys) > 0 {
					continue
				}
			}
			fail(k, "client: the client block is gone; its fields are top-level")
			continue
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	root.keys, root.vals = keys, vals
	for i, k := range root.keys {
		if k.text == "mock" {
			msRenamed(root.vals[i], []string{"ttft_per_isl_token", "itl_concurrency_lin", "ttft_concurrency_lin"}, fail)
			if b := mapValue(root.vals[i], "batch"); b != nil {
				msRenamed(b, []string{"step", "decode_token", "prefill_token"}, fail)
			}
		}
	}
}

// mapValue returns the value of m's key name (nil if m is not a mapping or lacks it).
func mapValue(m *node, name string) *node {
	if m == nil || m.kind != 'm' {
		return nil
	}
	for i, k := range m.keys {
		if k.text == name {
			return m.vals[i]
		}
	}
	return nil
}

// msRenamed reads the mock's older numbers of milliseconds, NAME_ms (e.g.
// "ttft_per_isl_token_ms: 0.02"), as the durations NAME that replaced them
// ("ttft_per_isl_token: 20µs"). The shim goes in v0.3.
func msRenamed(m *node, names []string, fail func(n *node, msg string)) {
	if m == nil || m.kind != 'm' {
		return
	}
	for i, k := range m.keys {
		name, ok := strings.CutSuffix(k.text, "_ms")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		v := m.vals[i]
		ms, err := strconv.ParseFloat(v.text, 64)
		if v.kind != 'v' || v.quoted || err != nil || math.IsNaN(ms) || math.IsInf(ms, 0) {
			if fail != nil {
				fail(v, fmt.Sprintf("%s: want a number of milliseconds (the older spelling of %s: DURATION)", k.text, name))
			}
			continue
		}
		if mapValue(m, name) != nil {
			if fail != nil {
				fail(k, fmt.Sprintf("%q and %q both set: %s is the older spelling in milliseconds; keep %s", k.text, name, k.text, name))
			}
			continue
		}
		text := time.Duration(ms * float64(time.Millisecond)).String()
		m.keys[i] = &node{line: k.line, col: k.col, kind: 'v', v: name, text: name, quoted: true}
		m.vals[i] = &node{line: v.line, col: v.col, kind: 'v', v: text, text: text, quoted: true}
	}
}

// node is a parsed JSON or YAML value with its position.
type node struct {
	line, col int
	kind      byte // 'm' mapping, 's' sequence, 'v' scalar
	keys      []*node
	vals      []*node
	items     []*node
	v         any    // scalar: string, json.Number, bool or nil
	text      string // scalar as written
	quoted    bool   // scalar is a string
}

// DecodeFile checks data (the file name, for positions; YAML when isYAML, else JSON)
// against Scenario's fields, then decodes it, as [ReadFile] and [Parse] do. Package run
// reads an artifact directory's scenario.json with it.
func DecodeFile(name string, data []byte, isYAML bool) (Scenario, error) {
	var root *node
	var err error
	if isYAML {
		root, err = parseYAML(data)
	} else {
		root, err = parseJSON(data)
	}
	if le := (*limitError)(nil); errors.As(err, &le) {
		return Scenario{}, &FileError{File: name, Line: le.line, Col: le.col, Msg: le.msg}
	}
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w: %w", name, ErrInvalidScenario, err)
	}
	if root == nil {
		return Scenario{}, nil
	}
	c := &checker{file: name}
	renamed(root, false, func(n *node, msg string) { c.fail(n, "", "%s", msg) })
	c.walk(root, reflect.TypeFor[Scenario](), "", false)
	if len(c.errs) == 0 {
		c.checkClasses(root) // classes.go: names, loads, rule scopes
	}
	slices.SortStableFunc(c.errs, func(a, b error) int {
		x, y := a.(*FileError), b.(*FileError)
		return cmp.Or(cmp.Compare(x.Line, y.Line), cmp.Compare(x.Col, y.Col))
	})
	if len(c.errs) > 0 {
		return Scenario{}, errors.Join(c.errs...)
	}
	b, err := json.Marshal(root.value())
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w: %w", name, ErrInvalidScenario, err)
	}
	var s Scenario
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return Scenario{}, fmt.Errorf("%s: %w: %s", name, ErrInvalidScenario, strings.TrimPrefix(err.Error(), "scenario: "))
	}
	return s, nil
}

// value returns n as encoding/json's generic value.
func (n *node) value() any {
	switch n.kind {
	case 'm':
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k.text] = n.vals[i].value()
		}
		return m
	case 's':
		out := make([]any, len(n.items))
		for i, it := range n.items {
			out[i] = it.value()
		}
		return out
	}
	return n.v
}

// Limits on a scenario file's shape. YAML aliases are expanded into the tree that is
// checked, so a small file can stand for a huge one ("billion laughs"): maxNodes
// bounds the nodes aliases expand to, as the YAML library bounds aliasing when it
// decodes into values; maxAliasBytes bounds the text of the scalars they expand to,
// since a long string aliased within the node limit still stands for gigabytes once
// the tree is written out as JSON and decoded; and maxDepth bounds nesting (JSON and
// YAML) so that no walk of the tree can exhaust the stack. A scenario file is a few
// levels deep, a few hundred nodes and a few KiB long.
const (
	maxDepth      = 100
	maxNodes      = 100_000
	maxAliasBytes = 4 << 20
)

// limitError is a problem at a position of the text, before the tree exists.
type limitError struct {
	line, col int
	msg       string
}

func (e *limitError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

func parseYAML(data []byte) (*node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	r := &yamlReader{open: map[*yaml.Node]bool{}}
	return r.node(doc.Content[0], 0, false)
}

// yamlReader turns a yaml.Node tree into a node tree, expanding aliases within the
// limits: an alias to an anchor it is inside of (a cycle) is refused, and so are more
// than maxNodes nodes or maxAliasBytes bytes of scalar text reached through aliases,
// or more than maxDepth levels.
type yamlReader struct {
	expanded int                 // nodes made while expanding aliases
	bytes    int                 // bytes of scalar text those nodes hold
	alias    *yaml.Node          // the outermost alias being expanded
	open     map[*yaml.Node]bool // anchored nodes being read (an alias to one is a cycle)
}

func (r *yamlReader) node(y *yaml.Node, depth int, viaAlias bool) (*node, error) {
	if y.Kind == yaml.AliasNode {
		a := y
		for y.Kind == yaml.AliasNode {
			if y.Alias == nil {
				return nil, &limitError{a.Line, a.Column, fmt.Sprintf("alias *%s: no such anchor", a.Value)}
			}
			y = y.Alias
		}
		if r.open[y] {
			return nil, &limitError{a.Line, a.Column, fmt.Sprintf("alias *%s refers to a node that contains it (line %d): an alias cycle", a.Value, y.Line)}
		}
		if !viaAlias {
			r.alias = a
		}
		viaAlias = true
	}
	if depth >= maxDepth {
		return nil, &limitError{y.Line, y.Column, fmt.Sprintf("nested more than %d levels deep (the limit)", maxDepth)}
	}
	if viaAlias {
		if r.expanded++; r.expanded > maxNodes {
			a := r.alias
			return nil, &limitError{a.Line, a.Column, fmt.Sprintf("alias *%s: aliases expand to more than %d nodes (the limit); write the values out or use fewer aliases", a.Value, maxNodes)}
		}
		if r.bytes += len(y.Value); r.bytes > maxAliasBytes {
			a := r.alias
			return nil, &limitError{a.Line, a.Column, fmt.Sprintf("alias *%s: aliases expand to more than %d MiB of text (the limit); write the values out or use fewer aliases", a.Value, maxAliasBytes>>20)}
		}
	}
	if y.Anchor != "" {
		r.open[y] = true
		defer delete(r.open, y)
	}
	n := &node{line: y.Line, col: y.Column}
	switch y.Kind {
	case yaml.MappingNode:
		n.kind = 'm'
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, err := r.node(y.Content[i], depth+1, viaAlias)
			if err != nil {
				return nil, err
			}
			v, err := r.node(y.Content[i+1], depth+1, viaAlias)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
		}
	case yaml.SequenceNode:
		n.kind = 's'
		for _, c := range y.Content {
			it, err := r.node(c, depth+1, viaAlias)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, it)
		}
	default:
		n.kind, n.text = 'v', y.Value
		switch y.ShortTag() {
		case "!!int", "!!float":
			n.v = json.Number(y.Value)
			if _, err := strconv.ParseFloat(y.Value, 64); err != nil {
				var f float64
				if err := y.Decode(&f); err != nil {
					return nil, fmt.Errorf("%d:%d: %v", y.Line, y.Column, err)
				}
				n.v = json.Number(strconv.FormatFloat(f, 'g', -1, 64))
			}
		case "!!bool":
			var b bool
			_ = y.Decode(&b)
			n.v = b
		case "!!null":
			n.v = nil
		default:
			n.v, n.quoted = y.Value, true
		}
	}
	return n, nil
}

// parseJSON reads data with encoding/json's tokenizer, keeping each value's position.
func parseJSON(data []byte) (*node, error) {
	p := &jsonParser{data: data, d: json.NewDecoder(bytes.NewReader(data))}
	p.d.UseNumber()
	n, err := p.value()
	if err == io.EOF {
		return nil, nil
	}
	if le := (*limitError)(nil); errors.As(err, &le) {
		return nil, err
	}
	if err != nil {
		line, col := p.pos(int(p.d.InputOffset()))
		return nil, fmt.Errorf("%d:%d: %s", line, col, strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := p.d.Token(); err != io.EOF {
		line, col := p.pos(int(p.d.InputOffset()))
		return nil, fmt.Errorf("%d:%d: data after the top-level value", line, col)
	}
	return n, nil
}

type jsonParser struct {
	data  []byte
	d     *json.Decoder
	depth int // open objects and arrays

	// The position pos last returned: offsets only grow, so each byte is counted once.
	off, line, lineStart int
}

// pos turns a byte offset into a 1-based line and column.
func (p *jsonParser) pos(off int) (int, int) {
	off = min(off, len(p.data))
	if off < p.off || p.line == 0 {
		p.off, p.line, p.lineStart = 0, 1, 0
	}
	for i := p.off; i < off; i++ {
		if p.data[i] == '\n' {
			p.line, p.lineStart = p.line+1, i+1
		}
	}
	p.off = off
	return p.line, off - p.lineStart + 1
}

// next returns the next token and where it starts.
func (p *jsonParser) next() (json.Token, int, int, error) {
	off := int(p.d.InputOffset())
	for off < len(p.data) && strings.IndexByte(" \t\r\n:,", p.data[off]) >= 0 {
		off++
	}
	tok, err := p.d.Token()
	line, col := p.pos(off)
	return tok, line, col, err
}

func (p *jsonParser) value() (*node, error) {
	tok, line, col, err := p.next()
	if err != nil {
		return nil, err
	}
	return p.from(tok, line, col)
}

func (p *jsonParser) from(tok json.Token, line, col int) (*node, error) {
	n := &node{line: line, col: col, kind: 'v'}
	switch t := tok.(type) {
	case json.Delim:
		if p.depth++; p.depth > maxDepth {
			return nil, &limitError{line, col, fmt.Sprintf("nested more than %d levels deep (the limit)", maxDepth)}
		}
		defer func() { p.depth-- }()
		switch t {
		case '{':
			n.kind = 'm'
			for {
				k, kl, kc, err := p.next()
				if err != nil {
					return nil, err
				}
				if k == json.Delim('}') {
					return n, nil
				}
				ks, _ := k.(string)
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, &node{line: kl, col: kc, kind: 'v', v: ks, text: ks, quoted: true})
				n.vals = append(n.vals, v)
			}
		case '[':
			n.kind = 's'
			for {
				tok, l, c, err := p.next()
				if err != nil {
					return nil, err
				}
				if tok == json.Delim(']') {
					return n, nil
				}
				it, err := p.from(tok, l, c)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, it)
			}
		}
	case string:
		n.v, n.text, n.quoted = t, t, true
	case json.Number:
		n.v, n.text = t, string(t)
	case bool:
		n.v, n.text = t, strconv.FormatBool(t)
	case nil:
		n.text = "null"
	}
	return n, nil
}

// checker walks a node tree against a Go type, collecting positioned errors.
type checker struct {
	file string
	errs []error
}

func (c *checker) fail(n *node, path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	c.errs = append(c.errs, &FileError{File: c.file, Line: n.line, Col: n.col, Path: path, Msg: msg})
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	checkDurType = reflect.TypeFor[check.Duration]()
	textType     = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonType     = reflect.TypeFor[json.Unmarshaler]()
)

// walk checks n against t. custom says that the struct holding n decodes itself
// (UnmarshalJSON), so its durations stay text; otherwise a time.Duration becomes
// nanoseconds, which is what encoding/json reads.
func (c *checker) walk(n *node, t reflect.Type, path string, custom bool) {
	if _, ok := prefixChecks[path]; ok {
		defer c.prefixField(n, path, len(c.errs))
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.kind == 'v' && n.v == nil && !n.quoted {
		return // null: the zero value
	}
	switch {
	case t == durationType || t == checkDurType:
		d, err := time.ParseDuration(n.text)
		switch {
		case !n.quoted:
			c.fail(n, path, "%s: %s", n.text, check.DurationForm)
		case err != nil:
			c.fail(n, path, "%q: %s", n.text, check.DurationForm)
		case d < 0 && (path == "abort.delay" || path == "abort.window" || path == "abort.over_saturation.min_duration" || path == "abort.over_saturation.window"):
			c.fail(n, path, "%s: want a duration >= 0", n.text)
		case t == durationType && !custom:
			n.v = d.Nanoseconds()
		}
		return
	case reflect.PointerTo(t).Implements(textType):
		if n.kind != 'v' {
			c.fail(n, path, "want text, such as %s", example(t))
			return
		}
		n.v = n.text
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.text)); err != nil {
			c.fail(n, path, "%v", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.kind != 'm' {
			c.fail(n, path, "want a mapping of fields")
			return
		}
		fields := jsonFields(t)
		mine := reflect.PointerTo(t).Implements(jsonType)
		for i, k := range n.keys {
			f, ok := fields[strings.ToLower(k.text)]
			if !ok {
				c.fail(k, "", "unknown field %q%s", join(path, k.text), suggest(k.text, t))
				continue
			}
			c.walk(n.vals[i], f.Type, join(path, f.name), mine)
		}
	case reflect.Map:
		if n.kind != 'm' {
			c.fail(n, path, "want a mapping")
			return
		}
		for i, k := range n.keys {
			c.walk(n.vals[i], t.Elem(), join(path, k.text), false)
		}
	case reflect.Slice, reflect.Array:
		if n.kind != 's' {
			c.fail(n, path, "want a list")
			return
		}
		for i, it := range n.items {
			p := fmt.Sprintf("%s[%d]", path, i)
			c.walk(it, t.Elem(), p, false)
			if path == "objectives.rules" && it.kind == 'v' {
				if _, err := check.ParseRule(it.text); err != nil {
					c.fail(it, p, "%v", err)
				}
			}
			if path == "abort.rules" && it.kind == 'v' && !IsOverSaturationRule(it.text) {
				if _, err := check.ParseAbortRule(it.text); err != nil {
					c.fail(it, p, "%v", err)
				}
			}
		}
	case reflect.Bool:
		if _, ok := n.v.(bool); !ok || n.kind != 'v' {
			c.fail(n, path, "%s: want true or false", n.text)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		num, ok := n.v.(json.Number)
		if !ok || n.kind != 'v' {
			c.fail(n, path, "%q: want a number", n.text)
			return
		}
		if path == "abort.failed_request_threshold" {
			if x, err := num.Float64(); err == nil && !(x >= 0 && x < 1) {
				c.fail(n, path, "%s: want a fraction in (0, 1), 0 = off", n.text)
			}
		}
		if t.Kind() != reflect.Float32 && t.Kind() != reflect.Float64 {
			if _, err := strconv.ParseInt(string(num), 10, 64); err != nil {
				if _, err := strconv.ParseUint(string(num), 10, 64); err != nil {
					c.fail(n, path, "%s: want a whole number", n.text)
				}
			}
		}
	case reflect.String:
		if n.kind != 'v' {
			c.fail(n, path, "want text")
			return
		}
		n.v = n.text // YAML's `model: 7` is the text "7"
		if allowed, ok := Enums[path]; ok && n.text != "" && !slices.Contains(allowed, n.text) {
			c.fail(n, "", "%s %q: want %s", path, n.text, loadgen.OrList(allowed))
		}
	}
}

// field is a struct field as encoding/json sees it.
type field struct {
	name string
	reflect.StructField
}

// jsonFields returns t's fields by lower-cased JSON name (encoding/json matches names
// case-insensitively), embedded structs' fields included.
func jsonFields(t reflect.Type) map[string]field {
	out := map[string]field{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		out[strings.ToLower(name)] = field{name, f}
	}
	return out
}

// suggest returns ` (did you mean "x"?)` for the field of t nearest to name, if any
// is near.
func suggest(name string, t reflect.Type) string {
	var names []string
	for _, f := range jsonFields(t) {
		names = append(names, f.name)
	}
	if best := Nearest(name, names); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Nearest returns the candidate nearest to s by edit distance, if it is within a
// third of s's length (at least 2 edits), else "" ([check.Nearest]). For "did you
// mean" hints.
func Nearest(s string, candidates []string) string { return check.Nearest(s, candidates) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// example is an example value of type t for a message.
func example(t reflect.Type) string {
	if strings.HasSuffix(t.String(), "distribution.Spec") {
		return `"normal:128,20"`
	}
	return "a string"
}

// durationsAsText rewrites the JSON b of a value of type t so that every
// time.Duration that encoding/json wrote as nanoseconds (in structs without their own
// MarshalJSON, such as loadgen.Config and mockserver.Config) is Go duration text, as
// scenario files hold it; the fields keep their order.
func durationsAsText(b []byte, t reflect.Type) ([]byte, error) {
	root, err := parseJSON(b)
	if err != nil || root == nil {
		return b, err
	}
	textify(root, t, false, true)
	var out bytes.Buffer
	if err := root.encode(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// durationsAsNanos is durationsAsText's inverse: duration text where encoding/json
// reads nanoseconds becomes nanoseconds, so that json.Unmarshal reads the JSON
// Scenario.MarshalJSON writes. Anything else is left for the decoder to judge.
func durationsAsNanos(b []byte, t reflect.Type) ([]byte, error) {
	root, err := parseJSON(b)
	if le := (*limitError)(nil); errors.As(err, &le) {
		return nil, err
	}
	if err != nil || root == nil {
		return b, nil // the decoder reports it
	}
	var errs []error
	renamed(root, true, func(n *node, msg string) { errs = append(errs, &limitError{n.line, n.col, msg}) })
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	textify(root, t, false, false)
	var out bytes.Buffer
	if err := root.encode(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// textify is the walk of durationsAsText (toText) and durationsAsNanos; custom says the
// struct holding n reads and writes itself.
func textify(n *node, t reflect.Type, custom, toText bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		if custom {
			return
		}
		if num, ok := n.v.(json.Number); ok && toText {
			if ns, err := num.Int64(); err == nil {
				n.v = time.Duration(ns).String()
			}
		}
		if text, ok := n.v.(string); ok && !toText {
			if d, err := time.ParseDuration(text); err == nil {
				n.v = d.Nanoseconds()
			}
		}
		return
	case reflect.PointerTo(t).Implements(textType):
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.kind != 'm' {
			return
		}
		fields := jsonFields(t)
		mine := reflect.TypeFor[json.Marshaler]()
		own := t.Implements(mine) || reflect.PointerTo(t).Implements(mine)
		for i, k := range n.keys {
			if f, ok := fields[strings.ToLower(k.text)]; ok {
				textify(n.vals[i], f.Type, own, toText)
			}
		}
	case reflect.Map:
		for _, v := range n.vals {
			textify(v, t.Elem(), false, toText)
		}
	case reflect.Slice, reflect.Array:
		for _, it := range n.items {
			textify(it, t.Elem(), false, toText)
		}
	}
}

// encode writes n as compact JSON, keys in their order.
func (n *node) encode(w *bytes.Buffer) error {
	switch n.kind {
	case 'm':
		w.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			kb, _ := json.Marshal(k.text)
			w.Write(kb)
			w.WriteByte(':')
			if err := n.vals[i].encode(w); err != nil {
				return err
			}
		}
		w.WriteByte('}')
	case 's':
		w.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := it.encode(w); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	default:
		b, err := json.Marshal(n.v)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
}
