package mockserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/perfgate/perfgate/mockserver"
)

// Example starts a zero-latency mock server, sends one chat request and reads what the
// server recorded about it. (No Output: it uses the network.)
func Example() {
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Tokenizer: "gpt2", Fast: true}))
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	body := `{"model":"m","messages":[{"role":"user","content":"Hello!"}],"max_tokens":8,"ignore_eos":true}`
	resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close()
	r := srv.Records()[0]
	fmt.Println(r.Endpoint, r.TokenizationMode, r.OSL, r.FinishReason)
}
