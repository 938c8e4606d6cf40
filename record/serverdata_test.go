package record

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullServerData sets every field of a ServerData (some to a known 0), so that a field
// the record's writer or its fast reader forgets shows up as a difference.
func fullServerData() ServerData {
	ms := func(v float64) OptionalDuration { return SomeDuration(time.Duration(v * float64(time.Millisecond))) }
	return ServerData{Source: ServerVLLM, TTFT: ms(97.5), Queue: ms(12.3), Prefill: ms(85.2), Decode: ms(1240.5), E2E: ms(1338),
		MeanITL: ms(9.1), OutputTPS: SomeFloat(103.2), PromptTokens: Some(512), Cached: Some(0),
		DraftTokens: Some(129), AcceptedTokens: Some(10), SpecSteps: Some(43), SpecLen: Some(3), AcceptHist: []int{39, 1, 0, 3},
		ReasoningTokens: Some(36), ReasoningTTFT: ms(108.22), ReasoningDecode: ms(160), ContentTokens: Some(20),
		ContentTTFT: ms(268.22), ContentDecode: SomeDuration(0), UnclassifiedTokens: Some(2)}
}

func TestFullServerDataSetsEveryField(t *testing.T) {
	v := reflect.ValueOf(fullServerData())
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("fullServerData leaves ServerData.%s unset; set it (and write and read it)", v.Type().Field(i).Name)
		}
	}
}

// TestServerDataKnownness: a record without "server" (or with a field left out) reads
// as unknown there, a reported 0 as a known 0, through the fast reader and
// encoding/json alike; a record's server data written and read back is the same.
func TestServerDataKnownness(t *testing.T) {
	for _, tc := range []struct {
		line string
		want ServerData
	}{
		{`{"index":1,"isl":10}`, ServerData{}},
		{`{"index":1,"server":{"source":"vllm","queue":0}}`, ServerData{Source: ServerVLLM, Queue: SomeDuration(0)}},
		{`{"index":1,"server":{"source":"llamacpp","ttft":5000,"draft_tokens":0}}`, ServerData{Source: ServerLlamaCpp, TTFT: SomeDuration(5000), DraftTokens: Some(0)}},
		{`{"index":1,"server":{"source":"sglang","output_tps":1.5e2,"mean_itl":null}}`, ServerData{Source: ServerSGLang, OutputTPS: SomeFloat(150)}}, // null: encoding/json's path
		{`{"index":1, "server" : {"source":"vllm","spec_steps":4}, "x":1}`, ServerData{Source: ServerVLLM, SpecSteps: Some(4)}},                      // unknown key: encoding/json's path
	} {
		var c Client
		if err := DecodeClient([]byte(tc.line), &c); err != nil {
			t.Fatalf("DecodeClient(%s): %v", tc.line, err)
		}
		if !reflect.DeepEqual(c.Server, tc.want) {
			t.Errorf("DecodeClient(%s).Server = %+v, want %+v", tc.line, c.Server, tc.want)
		}
		back := string(c.AppendJSON(nil))
		if has := strings.Contains(back, `"server"`); has != (tc.want.Source != "") {
			t.Errorf("AppendJSON of %+v = %s: server written = %v", tc.want, back, has)
		}
	}
	full := Client{Index: 3, Server: fullServerData()}
	var c Client
	if err := DecodeClient(full.AppendJSON(nil), &c); err != nil || !reflect.DeepEqual(c.Server, full.Server) {
		t.Errorf("round trip: %+v, %v; want %+v", c.Server, err, full.Server)
	}
	var bad Client
	if err := DecodeClient([]byte(`{"index":1,"server":{"source":"vllm","ttft":"5ms"}}`), &bad); err == nil {
		t.Errorf(`DecodeClient with "ttft":"5ms" = nil error, want one (a recording holds ns)`)
	}
}
