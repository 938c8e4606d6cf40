package loadgen

// TargetURL returns the URL requests of kind e go to for the base URL raw (as the
// load generator completes it: "http://h:8000" and "http://h:8000/v1" get e's path; a
// URL with another path is used as it is).
func TargetURL(raw string, e Endpoint) string { return endpointURL(raw, e) }

// Kind returns the API kind the configuration sends (API; chat when unset).
func (c *Config) Kind() Endpoint { return c.endpoint() }
