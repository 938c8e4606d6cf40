package scenario

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
)

// Class is one traffic class of a run of several (Scenario.Classes; docs/classes.md):
// interactive chat at a Poisson rate beside batch jobs at a fixed concurrency and
// agent jobs replayed from a trace, each with its own workload, load, headers and
// start, all in one run against one target, on one clock, into one recording. Every
// record of the class carries its Name (record.Client.Class); its metrics, rules
// ({class=NAME}) and regression statistics ("ttft_p99{class=NAME}") are its own.
//
// Its Workload and Load fields are flat in the class's mapping, as a scenario's are
// at its top level ("isl", "rate", "concurrency", "input_file", …). A class that sets
// none of them sends loadgen's defaults; the scenario's top level then sets no
// workload or load field but the seed (each class has its own).
type Class struct {
	// Name names the class in records, metrics, rules and reports: letters, digits,
	// '_', '-' and '.'; unique in the scenario. Required.
	Name string `json:"name"`
	// Start is how long after the run's start the class starts sending (its schedule,
	// its workers, its duration all start then); zero = at the start.
	Start time.Duration `json:"start,omitempty"`
	// Headers are added to the scenario's headers on the class's requests (a priority
	// header, "X-Priority: batch"), replacing one of the same name. Credential values
	// are sent but never written, as the scenario's are.
	Headers loadgen.Headers `json:"headers,omitempty"`
	// Requests and Duration stop the class (as the scenario's do a run of one class);
	// both zero = the scenario's, and with neither set there nor an input file,
	// DefaultRequests.
	Requests int           `json:"requests,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`

	// Workload is what the class sends: lengths, corpus, turns (sessions), an input
	// file (an agent trace), its seed (zero = the scenario's seed mixed with the
	// class's name, so two classes draw different prompts and arrivals).
	loadgen.Workload
	// Load is how fast: Rate (with Arrival) for an open loop, Concurrency for a closed
	// one, or Schedule to replay an input file's times. Required: a class states its
	// load.
	loadgen.Load
}

// MaxClasses bounds Scenario.Classes.
const MaxClasses = 64

// classNameRE is what a class name may be: it goes into request ids, session header
// values and rule scopes.
var classNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ClassNames returns the names of sc's classes, in order; none for a run of one class.
func (s Scenario) ClassNames() []string {
	out := make([]string, len(s.Classes))
	for i, c := range s.Classes {
		out[i] = c.Name
	}
	return out
}

// hasLoad reports whether l states a load: a rate, a rate series, a replayed schedule,
// a concurrency or a Pacer.
func hasLoad(l *loadgen.Load) bool {
	return l.Rate > 0 || len(l.RateSeries) > 0 || l.Schedule || l.Concurrency > 0 || l.Pacer != nil
}

// setFields returns the JSON names of v's fields that are not zero, those of embedded
// structs included (v a struct).
func setFields(v reflect.Value) []string {
	var out []string
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, setFields(v.Field(i))...)
			continue
		}
		if tag == "-" || v.Field(i).IsZero() {
			continue
		}
		out = append(out, tag)
	}
	return out
}

// topLevelSet returns the workload and load fields s sets at its top level, but the
// seed: with classes, each class has its own.
func (s Scenario) topLevelSet() []string {
	fs := slices.DeleteFunc(setFields(reflect.ValueOf(s.Config.Workload)), func(n string) bool { return n == "seed" || n == "" })
	return append(fs, slices.DeleteFunc(setFields(reflect.ValueOf(s.Config.Load)), func(n string) bool { return n == "" })...)
}

// classProblems returns what is wrong with s's classes, each naming the class:
// a missing or malformed name, a name used twice, a class with no load, a start
// before the run's, sharding (one process runs every class), and a top-level
// workload or load field.
func (s Scenario) classProblems() []string {
	if len(s.Classes) == 0 {
		return nil
	}
	var out []string
	if fs := s.topLevelSet(); len(fs) > 0 {
		out = append(out, fmt.Sprintf("%s set at the top level: with classes, each class has its own workload and load (set %s in each class)", strings.Join(fs, ", "), strings.Join(fs, ", ")))
	}
	if s.Shards > 1 {
		out = append(out, "shards: a run of classes is one process (split it by class instead)")
	}
	sets := func(i int, key string) bool {
		c := s.Classes[i]
		switch key {
		case "shards":
			return c.Shards > 1
		case "shard_index":
			return c.ShardIndex != 0
		case "start_at":
			return !c.StartAt.IsZero()
		}
		return false
	}
	for _, p := range classIssues(len(s.Classes), func(i int) (Class, bool) { return s.Classes[i], true }, sets) {
		out = append(out, p.msg)
	}
	for i, c := range s.Classes {
		if c.Requests < 0 || c.Duration < 0 {
			out = append(out, fmt.Sprintf("%s: requests %d, duration %s: want >= 0", ClassAt(i, c.Name), c.Requests, c.Duration))
		}
	}
	return out
}

// classIssue is one thing wrong with a scenario's classes: the class it is about
// (-1: the classes as a whole), the key of the class's mapping it is at ("" = the
// mapping itself), and the message, which names the class.
type classIssue struct {
	class int
	key   string
	msg   string
}

// classIssues lists what is wrong with n classes, the one definition of these checks
// for a Scenario value (Validate) and a scenario file (positioned at the key): a
// missing or malformed name, a name used twice, no load, a negative start, a run-level
// key set in a class (sets reports whether class i sets shards, shard_index or
// start_at), too many classes. class(i) is class i, false when it could not be read
// (a file's field check said why).
func classIssues(n int, class func(i int) (Class, bool), sets func(i int, key string) bool) []classIssue {
	var out []classIssue
	seen := map[string]int{}
	for i := range n {
		c, ok := class(i)
		if !ok {
			continue
		}
		at := ClassAt(i, c.Name)
		switch {
		case c.Name == "":
			out = append(out, classIssue{i, "", at + ": no name: each class needs one (name: chat)"})
		case !classNameRE.MatchString(c.Name):
			out = append(out, classIssue{i, "name", fmt.Sprintf("%s: name %q: want letters, digits, '_', '-' or '.'", at, c.Name)})
		}
		if j, dup := seen[c.Name]; dup && c.Name != "" {
			out = append(out, classIssue{i, "name", fmt.Sprintf("%s: the name %q is also classes[%d]'s: class names are unique", at, c.Name, j)})
		} else {
			seen[c.Name] = i
		}
		if !hasLoad(&c.Load) {
			out = append(out, classIssue{i, "", at + ": no load: set rate, request_rate_series, concurrency or schedule"})
		}
		if c.Start < 0 {
			out = append(out, classIssue{i, "start", fmt.Sprintf("%s: start %s: want a duration >= 0", at, c.Start)})
		}
		for _, k := range []string{"shards", "shard_index", "start_at"} {
			if sets(i, k) {
				out = append(out, classIssue{i, k, fmt.Sprintf("%s: %s is the run's, not a class's (start: delays a class)", at, k)})
			}
		}
	}
	if n > MaxClasses {
		out = append(out, classIssue{-1, "", fmt.Sprintf("classes: %d classes, at most %d", n, MaxClasses)})
	}
	return out
}

// ClassAt names class i in messages: `classes[1] "batch"`.
func ClassAt(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("classes[%d]", i)
	}
	return fmt.Sprintf("classes[%d] %q", i, name)
}

// scopeProblems returns the rules of s scoped to a class the scenario does not have.
func (s Scenario) scopeProblems() []string {
	rs, err := s.Objectives.ParseRules()
	if err != nil {
		return nil // reported as such
	}
	var out []string
	names := s.ClassNames()
	for _, r := range rs {
		if c := r.Class(); c != "" && !slices.Contains(names, c) {
			out = append(out, "objectives: "+unknownClass(r.String(), c, names))
		}
	}
	return out
}

// unknownClass is the message of a rule scoped to class c, which is not one of names.
func unknownClass(rule, c string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf("%s is scoped to class %q, and the scenario has no classes", rule, c)
	}
	msg := fmt.Sprintf("%s is scoped to class %q, which the scenario does not have (classes: %s)", rule, c, strings.Join(names, ", "))
	if near := check.Nearest(c, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return msg
}

// checkClasses positions the class problems of a scenario file's tree (after its
// fields were checked): each at its class's mapping or field, and a rule scoped to a
// class the file does not have at the rule.
func (c *checker) checkClasses(root *node) {
	if root == nil || root.kind != 'm' {
		return
	}
	classes := mapValue(root, "classes")
	var names []string
	if classes != nil && classes.kind == 's' {
		wl := jsonFields(reflect.TypeFor[loadgen.Workload]())
		ld := jsonFields(reflect.TypeFor[loadgen.Load]())
		for i, k := range root.keys {
			name := strings.ToLower(k.text)
			_, w := wl[name]
			_, l := ld[name]
			if (w || l) && name != "seed" && !isNull(root.vals[i]) {
				c.fail(k, "", "%s set at the top level: with classes, each class has its own workload and load (set it in each class)", k.text)
			}
		}
		decoded := make([]*Class, len(classes.items))
		for i, it := range classes.items {
			if it.kind != 'm' {
				continue // the field check said so
			}
			if cl, err := decodeClass(it); err == nil { // else the field check said what is wrong
				decoded[i] = &cl
				names = append(names, cl.Name)
			}
		}
		class := func(i int) (Class, bool) {
			if decoded[i] == nil {
				return Class{}, false
			}
			return *decoded[i], true
		}
		sets := func(i int, key string) bool { return mapValue(classes.items[i], key) != nil }
		for _, p := range classIssues(len(classes.items), class, sets) {
			at := classes
			if p.class >= 0 {
				at = classes.items[p.class]
				if v := mapValue(at, p.key); p.key != "" && v != nil {
					at = v
				}
			}
			c.fail(at, "", "%s", p.msg)
		}
	}
	obj := mapValue(root, "objectives")
	if obj == nil || obj.kind != 'm' {
		return
	}
	rules := mapValue(obj, "rules")
	if rules == nil || rules.kind != 's' {
		return
	}
	for i, it := range rules.items {
		if it.kind != 'v' {
			continue
		}
		r, err := check.ParseRule(it.text)
		if err != nil {
			continue // said at the rule
		}
		if cl := r.Class(); cl != "" && !slices.Contains(names, cl) {
			c.fail(it, fmt.Sprintf("objectives.rules[%d]", i), "%s", unknownClass(r.String(), cl, names))
		}
	}
}

// isNull reports whether n is a YAML or JSON null.
func isNull(n *node) bool { return n.kind == 'v' && n.v == nil && !n.quoted }

// decodeClass decodes one class's checked node.
func decodeClass(n *node) (Class, error) {
	var c Class
	b, err := json.Marshal(n.value())
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// classSeed is class name's seed when it sets none: the scenario's, mixed with the
// name (FNV-1a), so classes draw their own prompts and arrivals.
func classSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

// ClassConfig returns class i's load-generator configuration within the run's cfg:
// the run's target, stop, recording and validity settings, the class's workload,
// load, headers and stop, its name (loadgen.Recording.Class) and no record file (the
// classes' records go to the run's one recording: package run runs the classes).
func (s Scenario) ClassConfig(i int, cfg loadgen.Config) loadgen.Config {
	c := s.Classes[i]
	salt := cfg.PromptSalt
	cfg.Workload, cfg.Load = c.Workload, c.Load
	cfg.PromptSalt = salt
	if cfg.Seed == 0 {
		cfg.Seed = classSeed(s.Seed, c.Name)
	}
	if c.Requests != 0 || c.Duration != 0 {
		cfg.Requests, cfg.Duration = c.Requests, c.Duration
	}
	if cfg.Requests == 0 && cfg.Duration == 0 && cfg.InputFile == "" && len(cfg.RateSeries) == 0 {
		cfg.Requests = DefaultRequests
	}
	if len(c.Headers) > 0 {
		h := maps.Clone(cfg.Headers)
		if h == nil {
			h = loadgen.Headers{}
		}
		for k, v := range c.Headers {
			for old := range h {
				if strings.EqualFold(old, k) {
					delete(h, old)
				}
			}
			h[k] = v
		}
		cfg.Headers = h
	}
	cfg.Class = c.Name
	cfg.RecordFile, cfg.DiscardRecords = "", true
	return cfg
}

// classesWorkload is the classes' part of the workload's identity (Workload): each
// class's settings as a run of it alone would have them, named "classes.NAME.SETTING",
// and its start. None for a run of one class.
func (s Scenario) classesWorkload() [][2]string {
	var w [][2]string
	for i, c := range s.Classes {
		one := s
		one.Classes = nil
		one.Config = s.ClassConfig(i, s.Config)
		for _, kv := range one.Workload() {
			if kv[0] == "tokenizer" {
				continue // the run's, listed once
			}
			w = append(w, [2]string{"classes." + c.Name + "." + kv[0], kv[1]})
		}
		if c.Start != 0 {
			w = append(w, [2]string{"classes." + c.Name + ".start", c.Start.String()})
		}
		if len(c.Headers) > 0 {
			w = append(w, [2]string{"classes." + c.Name + ".headers", c.Headers.String()})
		}
	}
	return w
}

// classesLoadString describes the classes' loads: `chat: Poisson{5 req/s}; batch:
// concurrency=4`.
func (s Scenario) classesLoadString() string {
	var parts []string
	for i, c := range s.Classes {
		one := s
		one.Classes = nil
		one.Config = s.ClassConfig(i, s.Config)
		l := c.Name + ": " + one.LoadString()
		if c.Start > 0 {
			l += " from " + c.Start.String()
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, "; ")
}
