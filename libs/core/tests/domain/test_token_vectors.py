import numpy as np
import pytest

from exocortex.core.domain import token_vectors


def _unit(rows: int, dims: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_pack_is_one_byte_per_dimension_and_rows_come_back_unit_length():
    tokens = _unit(30, 384)
    data = token_vectors.pack(tokens)
    assert len(data) == 30 * 384
    back = token_vectors.unpack(data, 384)
    assert back.shape == (30, 384)
    assert back.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)


def test_cosines_survive_the_int8_round_trip():
    query, memory = _unit(8, 384, 1), _unit(40, 384, 2)
    exact = query @ memory.T
    packed = token_vectors.unpack(token_vectors.pack(memory), 384)
    assert np.abs(query @ packed.T - exact).max() < 0.01
    # MaxSim (each query token's best match, averaged) moves even less.
    assert abs((query @ packed.T).max(axis=1).mean() - exact.max(axis=1).mean()) < 0.005


def test_extreme_values_are_clipped_not_wrapped():
    tokens = np.zeros((2, 4), dtype=np.float32)
    # A float a hair over unit length rounds to 128, which int8 would wrap to -128.
    tokens[0, 0] = 1.01
    tokens[1, 1] = -1.01
    raw = np.frombuffer(token_vectors.pack(tokens), dtype=np.int8).reshape(2, 4)
    assert raw[0, 0] == 127
    assert raw[1, 1] == -127


def test_only_the_first_max_tokens_rows_are_kept():
    tokens = _unit(200, 16)
    back = token_vectors.unpack(token_vectors.pack(tokens, max_tokens=128), 16)
    assert back.shape == (128, 16)
    np.testing.assert_allclose(back[0], tokens[0], atol=0.02)


def test_no_tokens_is_an_empty_matrix():
    assert token_vectors.unpack(b"", 384).shape == (0, 384)
    assert token_vectors.pack(np.zeros((0, 384), dtype=np.float32)) == b""


def test_bytes_that_are_not_whole_rows_are_refused():
    with pytest.raises(ValueError, match="not rows of 384"):
        token_vectors.unpack(b"\x01" * 385, 384)
    with pytest.raises(ValueError, match="not rows of 0"):
        token_vectors.unpack(b"", 0)


def test_packed_tokens_give_the_cosines_of_the_unpacked_rows_in_a_quarter_of_the_bytes():
    memory, query = _unit(30, 384), _unit(5, 384)
    data = token_vectors.pack(memory)
    kept = token_vectors.read(data, 384)
    np.testing.assert_allclose(
        kept.cosines(query), query @ token_vectors.unpack(data, 384).T, atol=1e-5
    )
    np.testing.assert_allclose(kept.cosines(query), query @ memory.T, atol=0.01)
    assert kept.nbytes < memory.nbytes / 3
    assert token_vectors.packed(memory).rows.tobytes() == data


def test_packed_refuses_bytes_that_are_not_whole_rows():
    with pytest.raises(ValueError, match="not rows of 384"):
        token_vectors.read(b"\x01" * 385, 384)
    assert token_vectors.read(b"", 384).rows.shape == (0, 384)
