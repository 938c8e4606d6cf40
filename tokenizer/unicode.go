package tokenizer

import "strings"

// rewriteUnicodeClasses adapts a split pattern written for Oniguruma (Hugging Face
// tokenizers) or fancy-regex (tiktoken) to regexp2's .NET dialect where the two differ:
//   - case-insensitive contractions: Oniguruma folds 's' and 'ſ' (U+017F) together,
//     regexp2 lowers runes with unicode.ToLower and does not; spell the classes out.
func rewriteUnicodeClasses(p string) string {
	p = strings.ReplaceAll(p, `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, contractionsClass)
	return p
}

const contractionsClass = `(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`
