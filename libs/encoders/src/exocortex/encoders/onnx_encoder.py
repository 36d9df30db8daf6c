"""The model run by ONNX Runtime: the transformer exported once from the local weights (cached
by model fingerprint), the tokenizer from the model's own tokenizer.json, and mean pooling and
normalisation done here exactly as sentence-transformers does them.

Why: for one search query ONNX Runtime is several times faster than torch, and with spinning
threads turned off it degrades gracefully when the other processes of the stack keep the cores
busy, where torch's spinning worker threads collapse.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.encoders.export import export_onnx, int8_path, quantize_int8
from exocortex.encoders.model import ModelInfo, Pipeline, fingerprint_model, model_name

log = get_logger(__name__)

# Texts are sorted by length and run in slices of this size, so padding stays short.
SLICE = 32


class OnnxEncoder:
    # An ONNX Runtime session runs concurrent calls safely, so a query need not wait for a batch.
    concurrent_calls = True

    def __init__(
        self,
        path: Path,
        pipeline: Pipeline,
        *,
        threads: int,
        cache_dir: Path,
        export: bool = True,
        fingerprint: str | None = None,
        int8: bool = False,
    ) -> None:
        """With ``export=False`` only an existing export is used (FileNotFoundError otherwise):
        a process without torch, or one that must not race the embedding service's export.
        With ``int8`` the weights are an 8-bit copy of that export (see quantize_int8): about
        twice as fast on one short text, and close to, not equal to, the full model's vectors."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        fingerprint = fingerprint or fingerprint_model(path)
        onnx_path = cache_dir / f"{fingerprint}.onnx"
        if not onnx_path.is_file():
            if not export:
                raise FileNotFoundError(f"no onnx export at {onnx_path}")
            export_onnx(path, onnx_path)
        self._pipeline = pipeline
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(pipeline.max_seq_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        # Spinning threads burn the cores the rest of the stack needs and stall when those
        # cores are taken; blocking threads cost a little on an idle machine and win on a busy one.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        quantized = int8_path(cache_dir, fingerprint)
        if int8 and not quantized.is_file():
            quantize_int8(onnx_path, quantized)
            # The copy an older recipe wrote (unfused) is never read again.
            (cache_dir / f"{fingerprint}.int8.onnx").unlink(missing_ok=True)
        model_file = quantized if int8 else onnx_path
        try:
            self._session = ort.InferenceSession(
                str(model_file), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a damaged cache file: make it again, once
            if int8:
                log.warning("cached 8-bit model unreadable; quantizing again", error=str(exc))
                quantize_int8(onnx_path, quantized)
            elif export:
                log.warning("cached onnx model unreadable; exporting again", error=str(exc))
                export_onnx(path, onnx_path)
            else:
                raise
            self._session = ort.InferenceSession(
                str(model_file), options, providers=["CPUExecutionProvider"]
            )
        self._inputs = {i.name for i in self._session.get_inputs()}
        dims = int(self._session.get_outputs()[0].shape[-1])
        self.info = ModelInfo(name=model_name(path), dimensions=dims, fingerprint=fingerprint)
        log.info(
            "onnx encoder ready",
            model=str(model_file),
            threads=options.intra_op_num_threads,
            int8=int8,
        )

    def encode(self, texts: list[str]) -> list[Vector]:
        return self._encode(texts, tokens=False)[0]

    def encode_with_tokens(
        self, texts: list[str]
    ) -> tuple[list[Vector], list[npt.NDArray[np.float32]]]:
        """``encode``'s vectors (the very same: same slices, same padding) and each text's token
        vectors (see ``encode_tokens``), both from one run of the model."""
        return self._encode(texts, tokens=True)

    def encode_tokens(self, texts: list[str]) -> list[npt.NDArray[np.float32]]:
        """Each text's token vectors (the model's last hidden states, the special tokens left
        out), each of unit length: what late-interaction re-scoring compares (see retrieval's
        ``search.rerank``)."""
        out: list[npt.NDArray[np.float32]] = []
        for start in range(0, len(texts), SLICE):
            hidden, mask = self._hidden(texts[start : start + SLICE])
            out.extend(_token_rows(hidden, mask))
        return out

    def _encode(
        self, texts: list[str], *, tokens: bool
    ) -> tuple[list[Vector], list[npt.NDArray[np.float32]]]:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[Vector | None] = [None] * len(texts)
        token_out: list[npt.NDArray[np.float32] | None] = [None] * len(texts)
        for start in range(0, len(order), SLICE):
            picked = order[start : start + SLICE]
            hidden, mask = self._hidden([texts[i] for i in picked])
            vectors = self._pool(hidden, mask)
            rows = _token_rows(hidden, mask) if tokens else []
            for row, index in enumerate(picked):
                out[index] = vectors[row]
                if tokens:
                    token_out[index] = rows[row]
        return [v for v in out if v is not None], [t for t in token_out if t is not None]

    def _hidden(self, texts: list[str]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The last hidden states of a padded batch, and its attention mask."""
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: npt.NDArray[np.float32] = self._session.run(
            None, {k: v for k, v in feed.items() if k in self._inputs}
        )[0]
        return hidden, mask

    def _pool(
        self, hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self._pipeline.normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        result: npt.NDArray[np.float32] = pooled.astype(np.float32)
        return result


def _token_rows(
    hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]
) -> list[npt.NDArray[np.float32]]:
    """Each row's token vectors without its first and last token ([CLS], [SEP]) and padding,
    each of unit length."""
    out: list[npt.NDArray[np.float32]] = []
    for row in range(hidden.shape[0]):
        length = int(mask[row].sum())
        tokens = hidden[row, 1 : length - 1] if length > 2 else hidden[row, :length]
        norms = np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-12)
        out.append((tokens / norms).astype(np.float32))
    return out
