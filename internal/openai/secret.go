package openai

import "strings"

// Redacted replaces a credential wherever perfgate would otherwise print or store it.
const Redacted = "[redacted]"

// CredentialHeader reports whether a request header named name carries a credential,
// whose value must never reach a log, a recording or an artifact: Authorization,
// Proxy-Authorization, X-Api-Key, Api-Key, Cookie, and any header whose name contains
// "key", "token" or "secret" (case-insensitively).
func CredentialHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie":
		return true
	}
	return strings.Contains(n, "key") || strings.Contains(n, "token") || strings.Contains(n, "secret")
}
