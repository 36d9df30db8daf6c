"""The sentence-transformers model run by ONNX Runtime: its fingerprint and shape, the export
from its own weights, tokenisation, mean pooling and normalisation. Used by the embedding
service (which exports) and by retrieval's in-process query encoder (which only loads)."""

from exocortex.encoders.model import (
    Encoder,
    ModelInfo,
    Pipeline,
    bundled_model_path,
    fingerprint_model,
    model_name,
    read_pipeline,
)
from exocortex.encoders.onnx_encoder import OnnxEncoder

__all__ = [
    "Encoder",
    "ModelInfo",
    "OnnxEncoder",
    "Pipeline",
    "bundled_model_path",
    "fingerprint_model",
    "model_name",
    "read_pipeline",
]
