// Package redact makes URLs safe to print and store: a scrape target or a live-metrics
// receiver may carry a password or a token, and no log or artifact may.
package redact

import "net/url"

// URL returns raw with any user information and fragment dropped and every query value
// replaced by "redacted". A string that does not parse is returned as
// "[unparsable URL]".
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable URL]"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			for i := range q[k] {
				q[k][i] = "redacted"
			}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment = ""
	return u.String()
}
