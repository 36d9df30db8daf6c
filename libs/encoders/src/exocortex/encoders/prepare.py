"""`python -m exocortex.encoders.prepare DIR`: export the bundled model to ONNX into
DIR ahead of time (used when building the embedding image, so a container never exports at
start-up). Point ``EXO_EMBEDDING_CACHE_DIR`` at DIR to use it."""

from __future__ import annotations

import sys
from pathlib import Path

from exocortex.encoders.export import export_onnx
from exocortex.encoders.model import bundled_model_path, fingerprint_model


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m exocortex.encoders.prepare DIR", file=sys.stderr)
        return 2
    model = bundled_model_path()
    target = Path(argv[0]) / f"{fingerprint_model(model)}.onnx"
    if not target.is_file():
        export_onnx(model, target)
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
