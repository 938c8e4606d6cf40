package tokenizer_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/perfgate/perfgate/tokenizer"
)

func ExampleLoad() {
	// A built-in needs no files or network; a path, a model directory or a Hugging Face
	// Hub id ("meta-llama/Llama-3.1-8B-Instruct") load the same way.
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok.Name(), tok.Source(), tok.VocabSize())
	// Output: gpt2 builtin:gpt2 50257
}

func ExampleTokenizer_Encode() {
	tok, err := tokenizer.Builtin("gpt2")
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("Hello world<|endoftext|>", false)
	fmt.Println(ids, tok.Count("Hello world", false))
	fmt.Printf("%q\n", tok.Decode(ids, true))
	// Ids may cut a character in two; Decode replaces the piece as Hugging Face does.
	emoji := tok.Encode("😀", false)
	fmt.Printf("%v %+q\n", emoji, tok.Decode(emoji[:1], false))
	// Output:
	// [15496 995 50256] 2
	// "Hello world"
	// [47249 222] "\ufffd"
}

func ExampleBuiltins() {
	fmt.Println(strings.Join(tokenizer.Builtins(), " "))
	// Output: cl100k_base gpt2 o200k_base p50k_base p50k_edit r50k_base
}

func ExampleEncodeJSONL() {
	tok, err := tokenizer.Builtin("cl100k_base")
	if err != nil {
		fmt.Println(err)
		return
	}
	in := strings.NewReader(`{"text": "Hello world"}` + "\n" + `{"text": "tokens, counted"}` + "\n")
	if err := tokenizer.EncodeJSONL(tok, in, os.Stdout, tokenizer.JSONLOptions{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"ids":[9906,1917],"count":2}
	// {"ids":[31666,11,31094],"count":3}
}

func ExampleLoadWith() {
	// A gated model from the Hub at a given revision, with a token; the files land in the
	// Hugging Face cache (HF_HUB_CACHE), where the next Load finds them without network.
	tok, err := tokenizer.LoadWith("meta-llama/Llama-3.1-8B-Instruct", tokenizer.Options{
		Revision: "main",
		Token:    os.Getenv("HF_TOKEN"), // the default too; never logged
	})
	if err != nil {
		fmt.Println(err) // lists every place tried: built-ins, path, cache, Hub URLs
		return
	}
	fmt.Println(tok.Count("Hello world", true), tok.Fingerprint())
}
