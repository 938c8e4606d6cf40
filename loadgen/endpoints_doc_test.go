package loadgen

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

var updateDocs = flag.Bool("update", false, "rewrite the kinds table in docs/endpoints.md from the adapter table")

const (
	endpointsDoc = "../docs/endpoints.md"
	kindsBegin   = "<!-- kinds:begin (generated from loadgen's adapter table by `go test ./loadgen -run TestEndpointsDocCurrent -update`; do not edit) -->\n"
	kindsEnd     = "<!-- kinds:end -->\n"
)

// kindsTable renders the adapter table's facts as the Markdown table in
// docs/endpoints.md.
func kindsTable() string {
	var b strings.Builder
	b.WriteString("| Kind | Default path | Generates | Input counted as | Passages | Stream ends with `[DONE]` | API key in |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	yes := map[bool]string{true: "yes", false: "no"}
	for _, k := range apis {
		a := k.a
		var input []string
		for _, c := range []struct {
			name string
			t    *dataset.Turn
			tc   *turnCtx
		}{{"prompt alone", &dataset.Turn{}, &turnCtx{}}, {"with system prompt or history", &dataset.Turn{}, &turnCtx{system: "s"}}, {"payload", &dataset.Turn{Body: []byte("{}")}, &turnCtx{}}} {
			input = append(input, c.name+": "+map[inputCount]string{
				inputPrompt: "tokens", inputPayload: "its chat messages templated",
				inputTemplate: "templated", inputTemplateExtra: "templated (add_generation_prompt honoured)",
			}[a.input(c.t, c.tc)])
		}
		if _, ok := a.(audioInput); ok {
			input = []string{"an audio clip (ISL 0; the clip's tokens by the audio rule, see docs/multimodal.md)"}
		}
		key := "Authorization: Bearer"
		if hs := a.auth(nil, "k", map[string]string{}); len(hs) > 0 && hs[0][0] != "Authorization" {
			key = hs[0][0]
		}
		done := yes[a.endsWithDone()]
		if !a.generates() {
			done = "(does not stream)"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s | %s |\n", k.e, a.path(), yes[a.generates()], strings.Join(input, "; "), yes[a.docs()], done, key)
	}
	return b.String()
}

// docs/endpoints.md's table of kinds is the adapter table's: adding a kind without
// regenerating it fails here.
func TestEndpointsDocCurrent(t *testing.T) {
	doc, err := os.ReadFile(endpointsDoc)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(kindsBegin)), bytes.Index(doc, []byte(kindsEnd))
	if i < 0 || j < i {
		t.Fatalf("%s: no kinds table between %q and %q", endpointsDoc, kindsBegin, kindsEnd)
	}
	want := kindsTable()
	got := string(doc[i+len(kindsBegin) : j])
	if got == want {
		return
	}
	if *updateDocs {
		out := append(append(append([]byte{}, doc[:i+len(kindsBegin)]...), want...), doc[j:]...)
		if err := os.WriteFile(endpointsDoc, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale; run go test ./loadgen -run TestEndpointsDocCurrent -update\ngot:\n%s\nwant:\n%s", endpointsDoc, got, want)
}
