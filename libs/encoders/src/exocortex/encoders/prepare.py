"""`python -m exocortex.encoders.prepare DIR`: export the bundled model to ONNX into
DIR ahead of time, and its 8-bit copy beside it (used when building the embedding image, so a
container never exports or quantizes at start-up: its cache directory is not writable there,
and `EXO_EMBEDDING_PRECISION=int8` needs the copy). Point ``EXO_EMBEDDING_CACHE_DIR`` at DIR to
use them. Prints the two paths."""

from __future__ import annotations

import sys
from pathlib import Path

from exocortex.encoders.export import export_onnx, int8_path, quantize_int8
from exocortex.encoders.model import bundled_model_path, fingerprint_model


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m exocortex.encoders.prepare DIR", file=sys.stderr)
        return 2
    model = bundled_model_path()
    fingerprint = fingerprint_model(model)
    target = Path(argv[0]) / f"{fingerprint}.onnx"
    if not target.is_file():
        export_onnx(model, target)
    quantized = int8_path(target.parent, fingerprint)
    if not quantized.is_file():
        quantize_int8(target, quantized)
    print(target)
    print(quantized)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
