package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// TokenizerMatch checks that, for every request whose server-side count is known
// (ServerISL >= 0), the server counted the same number of input tokens as the client,
// within tolerance tokens (0 = exactly). Requests that failed are skipped. The evidence
// lists the worst offenders, and names a constant offset, which usually means a chat
// template or a BOS token counted on one side only.
func TokenizerMatch(reqs []Request, tolerance int) Verdict {
	const name = "tokenizer-match"
	type pair struct {
		id             string
		client, server int // client includes the expected overhead
		overhead       int
	}
	var ps []pair
	overheads := map[int]int{}
	unknown, withMedia, media := 0, 0, 0
	for _, r := range reqs {
		if r.Err == "" && r.ServerISL >= 0 {
			ps = append(ps, pair{r.ID, r.ISL + r.Overhead, r.ServerISL, r.Overhead})
			overheads[r.Overhead-r.Media]++
			if r.Media > 0 {
				withMedia++
				media += r.Media
			}
			if r.OverheadUnknown {
				unknown++
			}
		}
	}
	if len(ps) == 0 {
		return invalid(name, "tokenizer match: no request has a server-side input token count (mock recording or usage.prompt_tokens)")
	}
	diff := func(p pair) int { return p.server - p.client }
	abs := func(x int) int { return max(x, -x) }
	var off []pair
	diffs := make([]float64, len(ps))
	for i, p := range ps {
		diffs[i] = float64(diff(p))
		if abs(diff(p)) > tolerance {
			off = append(off, p)
		}
	}
	n := len(ps)
	tol := "exactly"
	if tolerance > 0 {
		tol = "within " + ntokens(tolerance)
	}
	v := Verdict{Check: name, Pass: len(off) == 0, Value: float64(len(off)), Unit: None}
	var tmpl []Line
	var ks []int
	for k := range overheads {
		if k != 0 {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	kinds := make([]string, len(ks))
	for i, k := range ks {
		kinds[i] = fmt.Sprintf("%+d", k)
	}
	if len(kinds) > 4 {
		kinds = []string{kinds[0] + ".." + kinds[len(kinds)-1]}
	}
	if len(kinds) > 0 {
		tmpl = []Line{{"chat template", fmt.Sprintf("the client rendered each request's messages with the chat template: %s tokens beyond the message contents; the client's count includes them", strings.Join(kinds, "/"))}}
	}
	if withMedia > 0 {
		tmpl = append(tmpl, Line{"media", fmt.Sprintf("%d requests carried images or audio: their %d image and audio tokens, counted by the served model's rule, are in the client's count too", withMedia, media)})
	}
	if unknown > 0 {
		tmpl = append(tmpl, Line{"chat template", fmt.Sprintf("unknown for %d requests (the client could not render their messages with the chat template: a failed render or an unreadable payload; isl_template -1): their client count is the message contents only", unknown)})
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("tokenizer match: client and server counted the input of all %d requests %s", n, tol)
		if tolerance > 0 {
			s := sorted(diffs)
			v.Evidence = []Line{{"server-client", fmt.Sprintf("min=%+d  median=%+g  max=%+d tokens", int(s[0]), quantile(s, 0.5), int(s[len(s)-1]))}}
		}
		v.Evidence = append(v.Evidence, tmpl...)
		return v
	}
	constant := slices.IndexFunc(ps, func(p pair) bool { return diff(p) != diff(ps[0]) }) < 0
	want := "equal counts"
	if tolerance > 0 {
		want = fmt.Sprintf("|server-client| <= %d", tolerance)
	}
	if constant {
		v.Summary = fmt.Sprintf("tokenizer mismatch: server counted %+d input tokens vs the client on every one of %d requests, want %s", diff(ps[0]), n, want)
	} else {
		worstD := 0
		for _, p := range off {
			worstD = max(worstD, abs(diff(p)))
		}
		v.Summary = fmt.Sprintf("tokenizer mismatch: %d of %d requests counted differently by client and server (max |server-client| = %s), want %s",
			len(off), n, ntokens(worstD), want)
	}
	v.Evidence = append(v.Evidence, tmpl...)
	s := sorted(diffs)
	v.Evidence = append(v.Evidence, Line{"server-client", fmt.Sprintf("min=%+d  median=%+g  max=%+d tokens (n=%d)", int(s[0]), quantile(s, 0.5), int(s[len(s)-1]), n)})
	slices.SortStableFunc(off, func(a, b pair) int { return cmp.Compare(abs(diff(b)), abs(diff(a))) })
	var parts []string
	for _, p := range off[:min(5, len(off))] {
		if p.overhead != 0 {
			parts = append(parts, fmt.Sprintf("#%s client=%d%+d server=%d (%+d)", p.id, p.client-p.overhead, p.overhead, p.server, diff(p)))
		} else {
			parts = append(parts, fmt.Sprintf("#%s client=%d server=%d (%+d)", p.id, p.client, p.server, diff(p)))
		}
	}
	v.Evidence = append(v.Evidence, Line{"worst", strings.Join(parts, "  ")})
	switch {
	case unknown > 0:
		v.Evidence = append(v.Evidence, Line{"hint", "give the client the server's tokenizer with its chat template (or readable payloads) so it counts each request's rendered template, or allow a tolerance"})
	case constant:
		v.Evidence = append(v.Evidence, Line{"hint", "a constant offset usually means a chat template or special tokens (BOS) counted on one side only"})
	default:
		v.Evidence = append(v.Evidence, Line{"hint", "varying offsets usually mean different tokenizers (vocabulary, normalizer or pre-tokenizer)"})
	}
	return v
}

// ntokens prints "1 token", "2 tokens".
func ntokens(n int) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d token", n)
	}
	return fmt.Sprintf("%d tokens", n)
}
