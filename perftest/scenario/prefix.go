package scenario

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

// prefixChecks are the prefix-cache workload's fields whose values a file must get
// right on their own, checked where they are written (FILE:LINE): a value that is
// the field's zero is written out only by mistake where zero is not a setting.
var prefixChecks = map[string]func(n *node) string{
	"num_prefix_prompts": func(n *node) string { return atLeast(n, 1, "a pool of at least 1 prefix (leave it out for none)") },
	"prompt_prefix_length": func(n *node) string {
		return atLeast(n, 1, "at least 1 token (leave it out for none)")
	},
	"prime_concurrency": func(n *node) string { return atLeast(n, 1, "at least 1 request in flight") },
	"kv_block_size": func(n *node) string {
		v, err := strconv.Atoi(n.text)
		if err != nil {
			return ""
		}
		if err := kvcache.CheckBlockSize(v); err != nil {
			return strings.TrimPrefix(err.Error(), "kvcache: ")
		}
		return ""
	},
	"kv_cache_blocks": func(n *node) string {
		v, err := strconv.Atoi(n.text)
		if err != nil {
			return ""
		}
		if err := kvcache.CheckCapacity(v); err != nil {
			return strings.TrimPrefix(err.Error(), "kvcache: ")
		}
		return ""
	},
	"prefix_buckets": func(n *node) string {
		var b bytes.Buffer
		if n.encode(&b) != nil {
			return ""
		}
		var bs dataset.PrefixBuckets
		if json.Unmarshal(b.Bytes(), &bs) != nil {
			return ""
		}
		if len(bs) == 0 {
			return "want at least one bucket (leave it out for none)"
		}
		if err := bs.Err(); err != nil {
			return strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		return ""
	},
}

// atLeast is the message for a whole number below lo ("" when it is not).
func atLeast(n *node, lo int, want string) string {
	if v, err := strconv.Atoi(n.text); err == nil && v < lo {
		return n.text + ": want " + want
	}
	return ""
}

// prefixField checks a prefix-cache field once its type checked out (no error added
// since errs).
func (c *checker) prefixField(n *node, path string, errs int) {
	if len(c.errs) > errs || n.kind == 'v' && n.v == nil && !n.quoted {
		return
	}
	if msg := prefixChecks[path](n); msg != "" {
		c.fail(n, path, "%s", msg)
	}
}
