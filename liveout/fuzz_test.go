package liveout

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseOutput: any --out value is an Output or an error wrapping ErrInvalid, never
// a panic; neither the error nor the Output's String shows the URL's user information
// or its query as written.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		"prometheus-rw=http://127.0.0.1:9090/api/v1/write",
		"otlp=https://user:s3cret@collector:4318/v1/metrics?token=t0ken&x=1",
		"influxdb=http://h/write?token=abc",
		"prometheus-rw=ftp://h/x",
		"otlp=http:///v1/metrics",
		"=",
		"otlp=%zz",
		"prometheus-rw=http://[::1]:9090/api/v1/write#frag",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		o, err := ParseOutput(spec)
		shown := o.String()
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseOutput(%q) = %v, not wrapping ErrInvalid", spec, err)
			}
			shown = err.Error()
		}
		_, raw, _ := strings.Cut(spec, "=")
		u, perr := url.Parse(raw)
		if perr != nil {
			return
		}
		// The user information as written, and a query with a value, must not show.
		if _, ok := u.User.Password(); ok && strings.Contains(shown, u.User.String()+"@") {
			t.Fatalf("ParseOutput(%q) shows the user information: %s", spec, shown)
		}
		valued := false // a query value that is a secret: not empty, not already "redacted"
		for _, vs := range u.Query() {
			for _, v := range vs {
				valued = valued || v != "" && v != "redacted"
			}
		}
		if q := u.RawQuery; valued && strings.Contains(shown, "?"+q) {
			t.Fatalf("ParseOutput(%q) shows the query: %s", spec, shown)
		}
	})
}
