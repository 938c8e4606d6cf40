package serverproc

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces a secret wherever perfgate would otherwise print or write it.
const Redacted = "[redacted]"

// SecretName reports whether an environment variable, a flag or a header of this name
// carries a secret: its name (case-insensitive, "-" read as "_") contains KEY, TOKEN,
// SECRET, PASSWORD, PASSWD or CREDENTIAL, or starts with AUTH or is COOKIE. TOKENIZER
// and TOKENS do not count as TOKEN, so --tokenizer and --max-tokens print as they are.
func SecretName(name string) bool {
	n := strings.ToUpper(strings.ReplaceAll(strings.TrimLeft(name, "-"), "-", "_"))
	if strings.HasPrefix(n, "AUTH") || n == "COOKIE" || n == "PROXY_AUTHORIZATION" {
		return true
	}
	n = strings.NewReplacer("TOKENIZER", "", "TOKENS", "").Replace(n)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactEnv returns env with the values of secret names replaced.
func redactEnv(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = redactEnvEntry(kv)
	}
	return out
}

func redactEnvEntry(kv string) string {
	k, _, ok := strings.Cut(kv, "=")
	if !ok || SecretName(k) {
		if !ok {
			return Redacted // not NAME=value: it could be anything
		}
		return k + "=" + Redacted
	}
	return kv
}

// Redact returns a shell command line with its secrets replaced by "[redacted]",
// everything else as written: the value of a NAME=value assignment and of a
// --flag value or --flag=value whose name looks secret ([SecretName]: --api-key,
// --hf-token, HF_TOKEN=…), a header "Name: value" of a secret name (Authorization,
// X-Api-Key), the word after "Bearer", and a URL's password and secret query values.
// Quotes are honoured: a quoted value is replaced whole.
func Redact(cmdline string) string {
	words := shellWords(cmdline)
	vals := make([]string, len(words))
	for i, w := range words {
		vals[i] = w.val
	}
	repl := redactValues(vals)
	if len(repl) == 0 {
		return cmdline
	}
	var b strings.Builder
	last := 0
	for i, w := range words {
		v, ok := repl[i]
		if !ok {
			continue
		}
		b.WriteString(cmdline[last:w.start])
		b.WriteString(shellQuote(v))
		last = w.end
	}
	b.WriteString(cmdline[last:])
	return b.String()
}

// redactArgs returns args with their secrets replaced, by Redact's rules.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i, v := range redactValues(args) {
		out[i] = v
	}
	return out
}

var (
	assignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)
	header     = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9_-]*)\s*:(\s*)(.*)$`)
)

// redactValues applies the redaction rules to a list of words (unquoted values) and
// returns the replacement of each word that changes.
func redactValues(words []string) map[int]string {
	repl := map[int]string{}
	// skip redacts up to n words after i that are not flags, and returns the last
	// index redacted.
	skip := func(i, n int) int {
		for ; n > 0 && i+1 < len(words) && !strings.HasPrefix(words[i+1], "--"); n-- {
			i++
			repl[i] = Redacted
		}
		return i
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, val, inline := strings.Cut(w, "=")
			switch {
			case SecretName(name) && inline:
				repl[i] = name + "=" + Redacted
			case SecretName(name):
				i = skip(i, 1)
			case inline:
				if r, ok := redactValue(val); ok {
					repl[i] = name + "=" + r
				}
			}
			continue
		}
		if strings.EqualFold(w, "bearer") || strings.EqualFold(w, "basic") {
			i = skip(i, 1)
			continue
		}
		if m := header.FindStringSubmatch(w); m != nil && m[3] == "" && SecretName(m[1]) {
			// An unquoted header split into words: "Authorization:" "Bearer" "x".
			i = skip(i, 2)
			continue
		}
		if r, ok := redactValue(w); ok {
			repl[i] = r
		}
	}
	return repl
}

// redactValue redacts one value: a NAME=value assignment of a secret name, a URL's
// password and secret query values, a header "Name: value" of a secret name, or a
// "Bearer …" credential.
func redactValue(v string) (string, bool) {
	if m := assignment.FindStringSubmatch(v); m != nil {
		if SecretName(m[1]) {
			return m[1] + "=" + Redacted, true
		}
		if r, ok := redactValue(v[len(m[0]):]); ok {
			return m[0] + r, true
		}
		return "", false
	}
	if strings.Contains(v, "://") {
		return redactURL(v)
	}
	if m := header.FindStringSubmatch(v); m != nil && SecretName(m[1]) {
		return m[1] + ":" + cmpOr(m[2], " ") + Redacted, true
	}
	for _, scheme := range []string{"bearer ", "basic "} {
		if len(v) > len(scheme) && strings.EqualFold(v[:len(scheme)], scheme) {
			return v[:len(scheme)] + Redacted, true
		}
	}
	return "", false
}

// redactURL redacts a URL's password and the values of its secret query parameters.
func redactURL(s string) (string, bool) {
	if !strings.Contains(s, "://") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", false
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), Redacted)
		changed = true
	}
	q := u.Query()
	for k := range q {
		if SecretName(k) {
			q.Set(k, Redacted)
			changed = true
		}
	}
	if !changed {
		return "", false
	}
	u.RawQuery = q.Encode()
	return strings.NewReplacer("%5Bredacted%5D", Redacted, "%5bredacted%5d", Redacted).Replace(u.String()), true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// word is one shell word of a command line: its value with the quotes removed, and
// where it is in the line.
type word struct {
	val        string
	start, end int
}

// shellWords splits a command line into words as sh does for simple commands: blanks
// separate words; single quotes, double quotes and backslashes quote; the operators
// ; & | < > ( ) end a word. It does no expansion. An unterminated quote runs to the
// end of the line.
func shellWords(s string) []word {
	var words []word
	var cur strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, word{val: cur.String(), start: start, end: end})
		}
		cur.Reset()
		start = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";&|<>()", c) >= 0:
			flush(i)
			continue
		case start < 0:
			start = i
		}
		switch c {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush(len(s))
	return words
}

// shellQuote quotes v for sh when it needs it.
func shellQuote(v string) string {
	if v != "" && !strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./:,@%+[]", r))
	}) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// quoteArgs joins args into one line sh would split back into them.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
