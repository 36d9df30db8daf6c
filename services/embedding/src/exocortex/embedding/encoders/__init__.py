"""Text encoders: the same sentence-transformers model run by ONNX Runtime (default) or torch."""

from exocortex.embedding.encoders.base import Encoder, ModelInfo, bundled_model_path, load_encoder

__all__ = ["Encoder", "ModelInfo", "bundled_model_path", "load_encoder"]
