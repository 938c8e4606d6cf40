package mockserver

import (
	"bytes"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/record"
)

// uploadKind is a test-only kind shaped as issue 24's audio transcription: a
// multipart/form-data upload (the model, and the text to count as a file) answered
// with a JSON object. It is everything such a kind needs in the mock: one type and
// its path in routes.
type uploadKind struct{}

func (uploadKind) parse(in *inputs, body, contentType []byte, j *job, rec *record.Server) *apiError {
	_, params, err := mime.ParseMediaType(string(contentType))
	if err != nil || params["boundary"] == "" {
		return badRequest("invalid_value", "body", "want multipart/form-data with a boundary")
	}
	form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(1 << 20)
	if err != nil || len(form.File["file"]) != 1 || len(form.Value["model"]) != 1 {
		return badRequest("missing_field", "file", "want one model and one file")
	}
	f, err := form.File["file"][0].Open()
	if err != nil {
		return badRequest("invalid_value", "file", "%v", err)
	}
	text, _ := io.ReadAll(f)
	ids, n := in.encodeBounded(string(text), in.maxModelLen())
	if e := in.checkLen(n, "file"); e != nil {
		return e
	}
	j.model, j.ids, rec.ISL = form.Value["model"][0], ids, len(ids)
	return nil
}

func (uploadKind) serve(h host, ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	if !h.simpleWait(c, rng, ctx.Conn()) {
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"text":"ok"}`)
	c.rec.Status = 200
	h.finish(c, j.ids)
}

// A kind added as one type plus its path in routes is served and recorded like the
// built-in ones, and a multipart body reaches it even with a binary part, which a
// JSON body may not carry.
func TestKindAddedInATest(t *testing.T) {
	const path = "/v1/test/upload"
	routes[path] = uploadKind{}
	t.Cleanup(func() { delete(routes, path) })
	s := start(t, Config{Fast: true})

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("model", "m")
	fw, _ := mw.CreateFormFile("file", "a.txt")
	_, _ = io.WriteString(fw, "hello world, counted as input")
	bw, _ := mw.CreateFormFile("blob", "a.bin")
	_, _ = bw.Write([]byte{0xff, 0xfe, 0x00, 0x80})
	_ = mw.Close()

	resp, body := post(t, s.URL()+path, buf.String(), "Content-Type", mw.FormDataContentType())
	if resp.StatusCode != 200 || string(body) != `{"text":"ok"}` {
		t.Fatalf("multipart upload: status %d, body %s; want 200 and the kind's answer", resp.StatusCode, body)
	}
	// The same bytes as a JSON body are refused before any kind sees them.
	resp, body = post(t, s.URL()+path, buf.String())
	if resp.StatusCode != 400 || !strings.Contains(string(body), "not valid UTF-8") {
		t.Errorf("binary body as JSON: status %d, body %s; want 400 naming the invalid UTF-8", resp.StatusCode, body)
	}
	s.Close()
	recs := s.Records()
	want := gpt2(t).Count("hello world, counted as input", false)
	if len(recs) != 1 || recs[0].Endpoint != path || recs[0].ISL != want || recs[0].Model != "m" || recs[0].Status != 200 {
		t.Fatalf("records %+v; want one for %s with ISL %d, model m, status 200", recs, path, want)
	}
	if rej := s.RejectedRecords(); len(rej) != 1 || rej[0].Rejected != "invalid_utf8" {
		t.Errorf("rejected records %+v; want one invalid_utf8", rej)
	}
}
