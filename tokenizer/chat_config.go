package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/tokenizer/internal/jinja"
)

// specialTokenKeys are the special-token attributes transformers passes to templates
// (SpecialTokensMixin.SPECIAL_TOKENS_ATTRIBUTES), in its order.
var specialTokenKeys = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token", "additional_special_tokens"}

// loadChatConfig reads the chat settings of the tokenizer directory dir:
// tokenizer_config.json (chat_template, bos_token/eos_token/… as strings or AddedToken
// dicts, add_bos_token/add_eos_token), chat_template.jinja beside it (which wins over
// tokenizer_config.json's template, as in transformers), additional_chat_templates/*.jinja,
// special_tokens_map.json (whose tokens override tokenizer_config.json's) and
// generation_config.json. It returns (nil, nil) when none of these files exist, and an
// error naming the file when one is malformed.
func loadChatConfig(dir string) (*chatConfig, error) {
	return loadChatConfigFS(os.DirFS(dir), ".", dir)
}

// loadChatConfigFS is loadChatConfig over a file system (e.g. an embed.FS): dir is the
// directory inside fsys, and display is how file names are shown in errors.
func loadChatConfigFS(fsys fs.FS, dir, display string) (*chatConfig, error) {
	read := func(name string) ([]byte, string, error) {
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		shown := filepath.Join(display, filepath.FromSlash(name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, shown, nil
		}
		if err != nil {
			return nil, shown, fmt.Errorf("tokenizer: %w", err)
		}
		return data, shown, nil
	}
	files := chatFiles{}
	var err error
	var name string
	if files.TokenizerConfig, name, err = read("tokenizer_config.json"); err != nil {
		return nil, err
	}
	files.tokenizerConfigName = name
	if files.ChatTemplate, _, err = read("chat_template.jinja"); err != nil {
		return nil, err
	}
	if files.SpecialTokensMap, files.specialTokensMapName, err = read("special_tokens_map.json"); err != nil {
		return nil, err
	}
	if files.GenerationConfig, files.generationConfigName, err = read("generation_config.json"); err != nil {
		return nil, err
	}
	if entries, err := fs.ReadDir(fsys, path.Join(dir, "additional_chat_templates")); err == nil {
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), ".jinja"); ok && !e.IsDir() {
				data, _, err := read(path.Join("additional_chat_templates", e.Name()))
				if err != nil {
					return nil, err
				}
				if files.Additional == nil {
					files.Additional = map[string][]byte{}
				}
				files.Additional[n] = data
			}
		}
	}
	return loadChatConfigFiles(files)
}

// chatFiles holds the contents of the files loadChatConfigFiles reads; nil = absent.
type chatFiles struct {
	TokenizerConfig  []byte            // tokenizer_config.json
	ChatTemplate     []byte            // chat_template.jinja
	SpecialTokensMap []byte            // special_tokens_map.json
	GenerationConfig []byte            // generation_config.json
	Additional       map[string][]byte // additional_chat_templates/NAME.jinja

	tokenizerConfigName, specialTokensMapName, generationConfigName string // for errors
}

func nameOr(name, def string) string {
	if name != "" {
		return name
	}
	return def
}

// loadChatConfigFiles builds the chat configuration from file contents (for tokenizers
// embedded in the binary). It returns (nil, nil) if every file is absent.
func loadChatConfigFiles(f chatFiles) (*chatConfig, error) {
	if f.TokenizerConfig == nil && f.ChatTemplate == nil && f.SpecialTokensMap == nil && f.GenerationConfig == nil && f.Additional == nil {
		return nil, nil
	}
	c := &chatConfig{templates: map[string]*chatTemplate{}}
	special := map[string]any{}
	if f.TokenizerConfig != nil {
		name := nameOr(f.tokenizerConfigName, "tokenizer_config.json")
		v, err := jinja.ParseJSON(f.TokenizerConfig)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", name, err)
		}
		cfg, ok := v.(*jinja.Dict)
		if !ok {
			return nil, fmt.Errorf("tokenizer: %s: not a JSON object", name)
		}
		if err := c.setTemplates(cfg, name); err != nil {
			return nil, err
		}
		for _, k := range specialTokenKeys {
			if tv, ok := cfg.Get(k); ok {
				special[k] = tv
			}
		}
		if b, ok := cfg.Get("add_bos_token"); ok {
			if bb, ok := b.(bool); ok {
				c.addBOS = &bb
			}
		}
		if b, ok := cfg.Get("add_eos_token"); ok {
			if bb, ok := b.(bool); ok {
				c.addEOS = &bb
			}
		}
	}
	if f.SpecialTokensMap != nil {
		name := nameOr(f.specialTokensMapName, "special_tokens_map.json")
		v, err := jinja.ParseJSON(f.SpecialTokensMap)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", name, err)
		}
		m, ok := v.(*jinja.Dict)
		if !ok {
			return nil, fmt.Errorf("tokenizer: %s: not a JSON object", name)
		}
		for _, k := range specialTokenKeys {
			if tv, ok := m.Get(k); ok {
				special[k] = tv
			}
		}
	}
	for _, k := range specialTokenKeys {
		v, ok := special[k]
		if !ok || v == nil {
			continue
		}
		if k == "additional_special_tokens" {
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("tokenizer: additional_special_tokens must be a list")
			}
			strs := make([]any, 0, len(list))
			for _, e := range list {
				if s, ok := tokenString(e); ok {
					strs = append(strs, s)
				}
			}
			c.special = append(c.special, specialVar{k, strs})
			continue
		}
		if s, ok := tokenString(v); ok {
			c.special = append(c.special, specialVar{k, s})
		}
	}
	if f.ChatTemplate != nil {
		if _, ok := c.templates["default"]; !ok {
			c.names = append([]string{"default"}, c.names...)
		}
		c.templates["default"] = &chatTemplate{src: string(f.ChatTemplate)}
	}
	if len(f.Additional) > 0 {
		names := make([]string, 0, len(f.Additional))
		for n := range f.Additional {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if _, ok := c.templates[n]; !ok {
				c.names = append(c.names, n)
			}
			c.templates[n] = &chatTemplate{src: string(f.Additional[n])}
		}
	}
	if f.GenerationConfig != nil {
		name := nameOr(f.generationConfigName, "generation_config.json")
		var g struct {
			EOS json.RawMessage `json:"eos_token_id"`
		}
		if err := json.Unmarshal(f.GenerationConfig, &g); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", name, err)
		}
		if len(g.EOS) > 0 {
			var one int
			var many []int
			switch {
			case json.Unmarshal(g.EOS, &one) == nil:
				c.genEOSIDs = []int{one}
			case json.Unmarshal(g.EOS, &many) == nil:
				c.genEOSIDs = many
			case string(g.EOS) == "null":
			default:
				return nil, fmt.Errorf("tokenizer: %s: eos_token_id must be an integer or a list of integers", name)
			}
		}
	}
	return c, nil
}

// setTemplates reads "chat_template": a string, or a list of {"name", "template"}.
func (c *chatConfig) setTemplates(cfg *jinja.Dict, file string) error {
	v, ok := cfg.Get("chat_template")
	if !ok || v == nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		c.templates["default"] = &chatTemplate{src: x}
		c.names = append(c.names, "default")
	case []any:
		for i, e := range x {
			d, ok := e.(*jinja.Dict)
			if !ok {
				return fmt.Errorf("tokenizer: %s: chat_template[%d] is not an object", file, i)
			}
			n, _ := d.Get("name")
			t, _ := d.Get("template")
			ns, ok1 := n.(string)
			ts, ok2 := t.(string)
			if !ok1 || !ok2 {
				return fmt.Errorf("tokenizer: %s: chat_template[%d] needs string \"name\" and \"template\"", file, i)
			}
			if _, dup := c.templates[ns]; !dup {
				c.names = append(c.names, ns)
			}
			c.templates[ns] = &chatTemplate{src: ts}
		}
	default:
		return fmt.Errorf("tokenizer: %s: chat_template must be a string or a list of named templates", file)
	}
	return nil
}

// tokenString returns the text of a special token given as a string or an AddedToken
// dict ({"content": ..., "__type": "AddedToken", ...}).
func tokenString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case *jinja.Dict:
		if c, ok := x.Get("content"); ok {
			s, ok := c.(string)
			return s, ok
		}
	}
	return "", false
}
