package sse_test

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/sse"
)

func ExampleReader() {
	stream := "data: {\"n\":1}\n\n: keep-alive\n\nevent: response.output_text.delta\ndata: {\"n\":2}\n\ndata: [DONE]\n\n"
	r := sse.NewReader(strings.NewReader(stream))
	for {
		ev, err := r.Next()
		if err != nil || sse.IsDone(ev.Data) {
			break
		}
		fmt.Printf("type=%q data=%s\n", ev.Type, ev.Data)
	}
	// Output:
	// type="" data={"n":1}
	// type="response.output_text.delta" data={"n":2}
}

func ExampleAppendData() {
	var buf []byte
	buf = sse.AppendData(buf, []byte(`{"choices":[]}`))
	buf = append(buf, sse.Done...)
	fmt.Printf("%q\n", buf)
	// Output:
	// "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"
}
