"""The model run by ONNX Runtime: the transformer exported once from the local weights (cached
by model fingerprint), the tokenizer from the model's own tokenizer.json, and mean pooling and
normalisation done here exactly as sentence-transformers does them.

Why: for one search query ONNX Runtime is several times faster than torch, and with spinning
threads turned off it degrades gracefully when the other processes of the stack keep the cores
busy, where torch's spinning worker threads collapse.

How a batch is run (measured on 2 cores, all-MiniLM-L6-v2, texts of 110 and 124 characters on
average): the texts are sorted by their token count and cut into *runs* that pad to at most
``RUN_POSITIONS`` positions (rows × the longest row), and ``threads`` runs go side by side,
each on one thread, each thread taking the next run left (see ``run_pool``). A batch of 64
took 3.5-4.0 ms of wall time a text this way against 6.5-12.2 with two threads inside each run
of 32 texts: short runs pad little and keep their activations in the cache, and two one-thread
runs waste none of the hand-offs two threads inside one run pay on every operator (CPU a text
6.7-7.7 ms against 12-21). A lone text runs on one thread:
a little slower than two (8.2 against 6.7 ms for a short note) but a quarter cheaper in CPU,
which is what a busy stack runs short of.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.encoders.export import export_onnx, int8_path, quantize_int8
from exocortex.encoders.model import ModelInfo, Pipeline, fingerprint_model, model_name
from exocortex.encoders.run_pool import RunPool

log = get_logger(__name__)

# A run of the model pads to at most this many positions (rows × its longest row); a text
# longer than that runs alone. 256 and 512 measured alike and 1,024 a fifth slower a text.
RUN_POSITIONS = 256
# And holds at most this many texts (very short ones).
RUN_ROWS = 32


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
        threads_inside: int = 1,
    ) -> None:
        """With ``export=False`` only an existing export is used (FileNotFoundError otherwise):
        a process without torch, or one that must not race the embedding service's export.
        With ``int8`` the weights are an 8-bit copy of that export (see quantize_int8): about
        twice as fast on one short text, and close to, not equal to, the full model's vectors.
        ``threads_inside`` threads work inside each run: for lone texts whose wait matters more
        than their CPU (the embedding service's search queries), 1-2 ms sooner than one."""
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
        # Each run on one thread (unless asked); ``threads`` runs of a batch go side by side
        # (see the module).
        options.intra_op_num_threads = max(1, threads_inside)
        options.inter_op_num_threads = 1
        # The calling thread takes a run itself: a lone text (a query) never waits for a worker.
        self._runs = RunPool(threads)
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
            threads=self._runs.threads,
            int8=int8,
        )

    def encode(self, texts: list[str]) -> list[Vector]:
        return self._encode(texts, tokens=False)[0]

    def encode_with_tokens(
        self, texts: list[str]
    ) -> tuple[list[Vector], list[npt.NDArray[np.float32]]]:
        """``encode``'s vectors (the very same: same runs, same padding) and each text's token
        vectors (see ``encode_tokens``), both from one run of the model."""
        return self._encode(texts, tokens=True)

    def encode_tokens(self, texts: list[str]) -> list[npt.NDArray[np.float32]]:
        """Each text's token vectors (the model's last hidden states, the special tokens left
        out), each of unit length: what late-interaction re-scoring compares (see retrieval's
        ``search.rerank``)."""
        return self._encode(texts, vectors=False, tokens=True)[1]

    def _encode(
        self, texts: list[str], *, tokens: bool, vectors: bool = True
    ) -> tuple[list[Vector], list[npt.NDArray[np.float32]]]:
        if not texts:
            return [], []
        encodings = self._tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        runs = plan_runs(lengths)

        def run(picked: list[int]) -> tuple[list[Vector], list[npt.NDArray[np.float32]]]:
            hidden, mask = self._hidden([encodings[i].ids for i in picked])
            pooled = list(self._pool(hidden, mask)) if vectors else []
            return pooled, _token_rows(hidden, mask) if tokens else []

        out: list[Vector | None] = [None] * len(texts)
        token_out: list[npt.NDArray[np.float32] | None] = [None] * len(texts)
        for picked, (pooled, rows) in zip(runs, self._runs.map(run, runs), strict=True):
            for row, index in enumerate(picked):
                if vectors:
                    out[index] = pooled[row]
                if tokens:
                    token_out[index] = rows[row]
        return [v for v in out if v is not None], [t for t in token_out if t is not None]

    def _hidden(
        self, rows: Sequence[Sequence[int]]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The last hidden states of a padded run of token ids, and its attention mask."""
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, token_ids in enumerate(rows):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
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


def plan_runs(lengths: Sequence[int]) -> list[list[int]]:
    """The texts (by index) of each run of the model: sorted by token count, cut where a run
    would pad past ``RUN_POSITIONS`` positions or hold more than ``RUN_ROWS`` texts."""
    runs: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        # Sorted, so this text is the run's longest: the run would pad to it.
        if current and (
            (len(current) + 1) * lengths[index] > RUN_POSITIONS or len(current) >= RUN_ROWS
        ):
            runs.append(current)
            current = []
        current.append(index)
    if current:
        runs.append(current)
    return runs


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
