package openai

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/jsonscan"
	"github.com/perfgate/perfgate/record"
)

// serverField is one scalar of a server's data as the record keeps it: the key in
// the server's object and where the parser puts it.
type serverField struct {
	key  string
	unit time.Duration // a time's unit; 0: a count (count true) or a number
	dur  func(*record.ServerData) *record.OptionalDuration
	num  func(*record.ServerData) *record.OptionalFloat
	cnt  func(*record.ServerData) *record.Optional
}

// serverFields are the scalar members ChunkParser reads from each source's object.
var serverFields = map[string][]serverField{
	keyVLLM: {
		{key: "time_to_first_token_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.Prefill }},
		{key: "generation_time_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.Decode }},
		{key: "queue_time_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.Queue }},
		{key: "mean_itl_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.MeanITL }},
		{key: "tokens_per_second", num: func(s *record.ServerData) *record.OptionalFloat { return &s.OutputTPS }},
	},
	keyLlamaCpp: {
		{key: "prompt_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.Prefill }},
		{key: "predicted_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.Decode }},
		{key: "predicted_per_token_ms", unit: time.Millisecond, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.MeanITL }},
		{key: "predicted_per_second", num: func(s *record.ServerData) *record.OptionalFloat { return &s.OutputTPS }},
		{key: "prompt_n", cnt: func(s *record.ServerData) *record.Optional { return &s.PromptTokens }},
		{key: "cache_n", cnt: func(s *record.ServerData) *record.Optional { return &s.Cached }},
		{key: "draft_n", cnt: func(s *record.ServerData) *record.Optional { return &s.DraftTokens }},
		{key: "draft_n_accepted", cnt: func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }},
	},
	keySGLang: {
		{key: "queue_time", unit: time.Second, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.Queue }},
		{key: "e2e_latency", unit: time.Second, dur: func(s *record.ServerData) *record.OptionalDuration { return &s.E2E }},
		{key: "decode_throughput", num: func(s *record.ServerData) *record.OptionalFloat { return &s.OutputTPS }},
		{key: "cached_tokens", cnt: func(s *record.ServerData) *record.Optional { return &s.Cached }},
		{key: "spec_verify_ct", cnt: func(s *record.ServerData) *record.Optional { return &s.SpecSteps }},
		{key: "spec_accept_token_num", cnt: func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }},
		{key: "spec_accepted_drafts", cnt: func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }},
		{key: "spec_num_correct_drafts", cnt: func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }},
		{key: "spec_draft_token_num", cnt: func(s *record.ServerData) *record.Optional { return &s.DraftTokens }},
		{key: "spec_proposed_drafts", cnt: func(s *record.ServerData) *record.Optional { return &s.DraftTokens }},
		{key: "spec_num_proposed_drafts", cnt: func(s *record.ServerData) *record.Optional { return &s.DraftTokens }},
	},
}

// aliased reports that another member of fields present in obj fills fd's record
// field (SGLang's names for one count): which of them the record keeps depends on
// their order, which a map does not keep, so fd is not checked alone.
func aliased(fd serverField, fields []serverField, obj map[string]json.RawMessage) bool {
	var probe record.ServerData
	at := func(f serverField) any {
		switch {
		case f.dur != nil:
			return f.dur(&probe)
		case f.num != nil:
			return f.num(&probe)
		}
		return f.cnt(&probe)
	}
	for _, o := range fields {
		if raw, ok := obj[o.key]; o.key != fd.key && ok && string(raw) != "null" && at(o) == at(fd) {
			return true
		}
	}
	return false
}

// FuzzServerData feeds answers carrying a server's per-request data to ChunkParser
// and holds it to encoding/json. Property: no panic and no chunk read past the input;
// for an answer with exactly one of metrics, timings or meta_info whose keys are
// written plainly, each scalar member the record keeps is known exactly when
// encoding/json reads it as a finite number >= 0 (a count: an int >= 0), with that
// value, and a member encoding/json cannot read so is named in ServerBad. Seeds:
// testdata/serverdata/*.json (each vendor's documented format).
func FuzzServerData(f *testing.F) {
	paths, _ := filepath.Glob("testdata/serverdata/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"metrics":{"queue_time_ms":"1","time_to_first_token_ms":-2,"mean_itl_ms":1e999}}`))
	f.Add([]byte(`{"timings":{"prompt_n":1.5,"cache_n":-0,"predicted_ms":null,"draft_n":"7"}}`))
	f.Add([]byte(`{"meta_info":{"queue_time":[1],"cached_tokens":1e2,"e2e_latency":{}}}`))
	var p ChunkParser
	f.Fuzz(func(t *testing.T, data []byte) {
		var c StreamChunk
		err := p.Parse(data, &c)
		if err != nil {
			return
		}
		if i := jsonscan.SkipWS(data, 0); i >= len(data) || data[i] != '{' || !plainKeys(data) {
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil {
			return
		}
		if _, ok := top["response"]; ok {
			return // a Responses event's metrics: not modelled here
		}
		key, n := "", 0
		for k := range serverFields {
			if v, ok := top[k]; ok && string(v) != "null" {
				key, n = k, n+1
			}
		}
		if n != 1 {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(top[key], &obj) != nil {
			if c.ServerBad == "" {
				t.Errorf("%s: %s is not an object, ServerBad empty", data, key)
			}
			return
		}
		if c.Server == nil {
			t.Fatalf("%s: no server data read from %s", data, key)
		}
		for _, fd := range serverFields[key] {
			if aliased(fd, serverFields[key], obj) {
				continue
			}
			raw, present := obj[fd.key]
			present = present && string(raw) != "null"
			var got struct {
				known bool
				v     float64
			}
			switch {
			case fd.dur != nil:
				d := fd.dur(c.Server)
				got.known, got.v = d.Known, float64(d.D)
			case fd.num != nil:
				d := fd.num(c.Server)
				got.known, got.v = d.Known, d.V
			default:
				d := fd.cnt(c.Server)
				got.known, got.v = d.Known, float64(d.N)
			}
			want, ok := refServerValue(raw, fd)
			switch {
			case !present:
				if got.known {
					t.Errorf("%s: %s.%s absent, read as %v", data, key, fd.key, got.v)
				}
			case !ok:
				if got.known {
					t.Errorf("%s: %s.%s = %s, which encoding/json does not read as one, read as %v", data, key, fd.key, raw, got.v)
				}
				if c.ServerBad == "" {
					t.Errorf("%s: %s.%s = %s of the wrong type, ServerBad empty", data, key, fd.key, raw)
				}
			case !got.known || got.v != want:
				t.Errorf("%s: %s.%s = %v (known %v), encoding/json %v", data, key, fd.key, got.v, got.known, want)
			}
		}
	})
}

// refServerValue is what the record keeps of raw for fd, by encoding/json: a count
// as an int >= 0, a time or number as a finite float64 >= 0 (a time in ns, rounded);
// ok false when it is not one.
func refServerValue(raw json.RawMessage, fd serverField) (float64, bool) {
	if fd.cnt != nil {
		var n int
		if json.Unmarshal(raw, &n) != nil || n < 0 {
			return 0, false
		}
		return float64(n), true
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	if fd.dur != nil {
		if v*float64(fd.unit) >= float64(math.MaxInt64)/4 {
			return 0, false // past what a time.Duration holds
		}
		return float64(time.Duration(math.Round(v * float64(fd.unit)))), true
	}
	return v, true
}
