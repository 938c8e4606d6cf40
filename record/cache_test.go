package record

import (
	"bytes"
	"strings"
	"testing"
)

// TestEncoderCacheLines: the Encoder's lines are AppendJSON's (encoding/json's) for
// every record, whichever of its remembered values (the quoted strings, the run
// start's digits) a record repeats, changes to an equal copy, to another value of the
// same length, to "" or to a value too long to remember.
func TestEncoderCacheLines(t *testing.T) {
	base := sample()
	long := strings.Repeat("u", maxCachedString+1)
	copyOf := func(s string) string { return string([]byte(s)) }
	edits := []func(c *Client){
		func(c *Client) {},
		func(c *Client) {}, // the same strings again
		func(c *Client) { c.URL, c.Model = copyOf(c.URL), copyOf(c.Model) },
		func(c *Client) { c.URL = strings.Replace(c.URL, "1", "2", 1) },
		func(c *Client) { c.Model, c.FinishReason = "n\"é", "" },
		func(c *Client) {
			c.Endpoint, c.TokenizationMode, c.Clock = "completions", ModeChatTemplate, ClockKernel
		},
		func(c *Client) { c.RunStartUnixNano++ },
		func(c *Client) { c.URL = long },
		func(c *Client) { c.URL = long + "x" },
		func(c *Client) { c.RunStartUnixNano = 0; c.Clock = "" },
	}
	var out bytes.Buffer
	e := NewEncoder(&out)
	var want []byte
	c := base
	for round := range 3 {
		for i, edit := range edits {
			edit(&c)
			c.Index = round*len(edits) + i
			if err := e.Encode(&c); err != nil {
				t.Fatal(err)
			}
			want = append(append(want, c.AppendJSON(nil)...), '\n')
		}
		c = base
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.Bytes(); !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d:\n%s\nwant\n%s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines; want %d", len(gl), len(wl))
	}
}
