import re

import pytest

from exocortex.core.domain.chunking import needs_chunking, split_into_chunks


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_short_content_is_not_chunked() -> None:
    assert not needs_chunking("x" * 1500, 1500)
    assert needs_chunking("x" * 1501, 1500)


def test_paragraphs_are_packed_up_to_the_target_and_nothing_is_lost() -> None:
    paragraphs = [f"Paragraph {i}. " + "word " * 40 for i in range(12)]
    content = "\n\n".join(paragraphs)
    chunks = split_into_chunks(content, 500)
    assert len(chunks) > 1
    assert all(len(c) <= 500 for c in chunks)
    assert _norm(" ".join(chunks)) == _norm(content)


def test_a_long_paragraph_splits_at_sentences() -> None:
    content = " ".join(f"Sentence number {i} says something useful." for i in range(60))
    chunks = split_into_chunks(content, 300)
    assert all(c.endswith(".") for c in chunks)
    assert _norm(" ".join(chunks)) == _norm(content)


def test_a_sentence_without_breaks_splits_at_words() -> None:
    content = "word " * 500
    chunks = split_into_chunks(content, 200)
    assert all(len(c) <= 200 for c in chunks)
    assert _norm(" ".join(chunks)) == _norm(content)


def test_target_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        split_into_chunks("text", 0)
