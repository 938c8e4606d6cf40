//go:build !unix

package run

// fileLimit is unknown on this platform: not checked.
func fileLimit() (soft, hard uint64) { return 0, 0 }

func raiseFileLimit(uint64) error { return nil }
