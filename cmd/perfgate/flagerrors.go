package main

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// badValue is the error for a value a flag's Set refused: it names the flag, the value
// and the form the flag wants, with an example when the flag's usage or default gives
// one. reason is what Set said; the flag package's bare "parse error" and "value out of
// range" are replaced by the form, a Value's own explanation is kept.
func badValue(f *flag.Flag, val, reason string) error {
	form, kind := flagForm(f)
	switch {
	case kind == "" && reason != "parse error":
		if strings.Contains(reason, "e.g.") {
			return invalidf("--%s %q: %s", f.Name, val, reason)
		}
		return invalidf("--%s %q: %s%s", f.Name, val, reason, flagExample(f, kind))
	case reason == "value out of range":
		return invalidf("--%s %q: out of range; want %s%s", f.Name, val, form, flagExample(f, kind))
	}
	return invalidf("--%s %q: want %s%s", f.Name, val, form, flagExample(f, kind))
}

// needsValue is the error for a flag given last with no value.
func needsValue(f *flag.Flag) error {
	form, kind := flagForm(f)
	return invalidf("--%s needs a value: %s%s", f.Name, form, flagExample(f, kind))
}

// flagForm says what a flag takes: for a number, duration or boolean the type, then
// what the flag is ("a number: mean input tokens"); for any other flag the first clause
// of its usage, which names its values. kind is the type's name ("" for the others).
func flagForm(f *flag.Flag) (form, kind string) {
	_, text := splitTopic(f.Usage)
	what := firstClause(text)
	if i := strings.Index(what, "e.g."); i > 0 { // the example is given apart
		what = strings.TrimRight(what[:i], " ,;(")
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return what, ""
	}
	switch g.Get().(type) {
	case int, int64:
		return "a whole number: " + what, "int"
	case uint, uint64:
		return "a whole number, 0 or more: " + what, "uint"
	case float64:
		return "a number: " + what, "float"
	case time.Duration:
		return "a duration such as 500ms, 30s or 1m30s: " + what, "duration"
	case bool:
		return fmt.Sprintf("true or false (--%s=false; --%s alone is true)", f.Name, f.Name), "bool"
	}
	return what, ""
}

var (
	usageExample = regexp.MustCompile(`e\.g\. ("[^"]*"|[^\s;)]+)`)
	defaultValue = regexp.MustCompile(`(?:\(|; )default:? ([^\s;),]+)`)
)

// flagExample is ", e.g. --NAME VALUE" with a value the flag takes: its usage's example,
// else the default its usage states, else its own non-zero default; "" when there is
// none. A number or duration is given only if it parses as one (and is not negative).
func flagExample(f *flag.Flag, kind string) string {
	if kind == "bool" {
		return ""
	}
	var cands []string
	if m := usageExample.FindStringSubmatch(f.Usage); m != nil {
		cands = append(cands, strings.TrimRight(m[1], ","))
	}
	if m := defaultValue.FindStringSubmatch(f.Usage); m != nil {
		cands = append(cands, m[1])
	}
	if !zeroDefault(f.DefValue) {
		cands = append(cands, f.DefValue)
	}
	for _, c := range cands {
		if exampleFits(c, kind) {
			return fmt.Sprintf(", e.g. --%s %s", f.Name, c)
		}
	}
	return ""
}

// exampleFits reports whether s is a value of kind ("" takes any text).
func exampleFits(s, kind string) bool {
	var err error
	switch kind {
	case "int":
		var n int
		n, err = strconv.Atoi(s)
		return err == nil && n >= 0
	case "uint":
		_, err = strconv.ParseUint(s, 10, 64)
	case "float":
		var x float64
		x, err = strconv.ParseFloat(s, 64)
		return err == nil && x >= 0
	case "duration":
		_, err = time.ParseDuration(s)
	}
	return err == nil
}

// distError is the error for a distribution flag's text that does not parse: the flag,
// the text, the parser's reason, and example (a valid text) when the reason has none.
func distError(flagName, text string, err error, example string) error {
	if example == "" || strings.Contains(err.Error(), "e.g.") {
		return invalidf("%s %q: %v", flagName, text, err)
	}
	return invalidf("%s %q: %v, e.g. %s %s", flagName, text, err, flagName, example)
}
