package tokenizer

// knownSplitter returns a hand-written matcher for a well-known pattern, or nil.
func knownSplitter(pattern string) patternSplitter { return nil }
