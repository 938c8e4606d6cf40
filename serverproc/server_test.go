package serverproc

import (
	"strings"
	"testing"
	"time"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// nothing secret: unchanged, byte for byte
		{"vllm serve m --port 8000 --tokenizer gpt2 --max-num-batched-tokens 8192", ""},
		{`sh -c "exec  server"  --x 'a b'`, ""},
		// --flag value and --flag=value of a secret name
		{"vllm serve m --api-key sk-1 --port 8000", "vllm serve m --api-key [redacted] --port 8000"},
		{"vllm serve m --api-key=sk-1", "vllm serve m --api-key=[redacted]"},
		{"server --hf-token 'hf 1' --password=\"p w\"", "server --hf-token [redacted] --password=[redacted]"},
		// NAME=value assignments
		{"HF_TOKEN=hf_1 OPENAI_API_KEY=sk CUDA_VISIBLE_DEVICES=0 vllm serve m", "HF_TOKEN=[redacted] OPENAI_API_KEY=[redacted] CUDA_VISIBLE_DEVICES=0 vllm serve m"},
		{"env MY_SECRET='a b' AUTH_X=1 srv", "env MY_SECRET=[redacted] AUTH_X=[redacted] srv"},
		// headers, quoted and not
		{`curl -H 'Authorization: Bearer sk-1' http://h`, `curl -H 'Authorization: [redacted]' http://h`},
		{`curl -H "x-api-key: k" -H 'Accept: */*'`, `curl -H 'x-api-key: [redacted]' -H 'Accept: */*'`},
		{`curl -H Authorization: Bearer sk-1 --fail`, `curl -H Authorization: [redacted] [redacted] --fail`},
		{`curl --header=Authorization:sk-1`, `curl '--header=Authorization: [redacted]'`},
		{`x Bearer sk-1`, `x Bearer [redacted]`},
		// URLs: the password and secret query values
		{"srv --db postgres://u:pw@h/db --metrics 'http://h/m?token=t1&x=1'", "srv --db postgres://u:[redacted]@h/db --metrics 'http://h/m?token=[redacted]&x=1'"},
		// operators end words
		{"A_KEY=1 srv;B_TOKEN=2 srv2&&x --api-key k|y", "A_KEY=[redacted] srv;B_TOKEN=[redacted] srv2&&x --api-key [redacted]|y"},
		// a secret flag followed by another flag redacts nothing
		{"srv --api-key --port 1", ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := Redact(c.in); got != want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, want)
		}
	}
}

func TestRedactArgsAndEnv(t *testing.T) {
	got := redactArgs([]string{"vllm", "--api-key", "sk 1", "--header=X-Api-Key: k", "HF_TOKEN=t", "--port", "8000"})
	want := []string{"vllm", "--api-key", Redacted, "--header=X-Api-Key: " + Redacted, "HF_TOKEN=" + Redacted, "--port", "8000"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("redactArgs = %q, want %q", got, want)
	}
	if got := redactEnv([]string{"HF_TOKEN=t", "PATH=/bin", "GITHUB_PASSWORD=x", "TOKENIZERS_PARALLELISM=false", "junk"}); strings.Join(got, " ") != "HF_TOKEN=[redacted] PATH=/bin GITHUB_PASSWORD=[redacted] TOKENIZERS_PARALLELISM=false [redacted]" {
		t.Errorf("redactEnv = %q", got)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"HF_TOKEN": true, "OPENAI_API_KEY": true, "--api-key": true, "apikey": true, "DB_PASSWORD": true, "AWS_SECRET_ACCESS_KEY": true,
		"AUTH": true, "Authorization": true, "x-api-key": true, "Cookie": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "MYTOKENVALUE": true,
		"PATH": false, "--tokenizer": false, "--max-tokens": false, "TOKENIZERS_PARALLELISM": false, "CUDA_VISIBLE_DEVICES": false, "--port": false, "Accept": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestServerString(t *testing.T) {
	s := Server{Name: "A", Args: []string{"vllm", "serve", "my model", "--api-key", "sk"}, Env: []string{"HF_TOKEN=t", "X=1"}, Dir: "/w"}
	if got, want := s.String(), "vllm serve 'my model' --api-key [redacted] (env HF_TOKEN=[redacted] X=1; in /w)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (Server{Cmd: "srv --api-key sk"}).String(); got != "srv --api-key [redacted]" {
		t.Errorf("String() of a Cmd = %q", got)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		s    Server
		want string // "" = valid
	}{
		{Server{Cmd: "srv", URL: "http://127.0.0.1:8000"}, ""},
		{Server{Args: []string{"srv"}, URL: "https://h", Ready: "https://h/ready", ReadyTimeout: time.Second}, ""},
		{Server{URL: "http://h:1"}, "server server: no command"},
		{Server{Name: "A", Cmd: "a", Args: []string{"b"}, URL: "http://h:1"}, "server A: both Cmd and Args"},
		{Server{Cmd: "  ", URL: "http://h:1"}, "an empty command"},
		{Server{Cmd: "srv"}, `url "": want the base URL`},
		{Server{Cmd: "srv", URL: "h:8000"}, `url "h:8000"`},
		{Server{Cmd: "srv", URL: "http://h:1", Ready: "health"}, `ready "health": want a path`},
		{Server{Cmd: "srv", URL: "http://h:1", StopGrace: -1}, "want >= 0"},
		{Server{Cmd: "srv", URL: "http://h:1", Env: []string{"HF_TOKEN"}}, `env entry "[redacted]": want NAME=value`},
	} {
		err := c.s.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%#v: Validate() = %v, want nil", c.s, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%#v: Validate() = %v, want an error with %q", c.s, err, c.want)
		}
	}
}
