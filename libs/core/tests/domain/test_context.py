"""The text a memory's contextual vector is made from."""

from __future__ import annotations

from exocortex.core.domain.context import MAX_CONTENT_CHARS, PREVIOUS_CHARS, context_text


def test_the_previous_memory_leads_into_this_one() -> None:
    assert context_text("Did you go?", "Yes, on Sunday.") == "Did you go?\nYes, on Sunday."


def test_a_long_previous_memory_gives_its_end_cut_at_a_word() -> None:
    previous = " ".join(f"word{i}" for i in range(200))
    text = context_text(previous, "Yes.")
    assert text is not None
    head, own = text.rsplit("\n", 1)
    assert own == "Yes."
    assert len(head) <= PREVIOUS_CHARS
    assert previous.endswith(head)
    assert head.split()[0] in previous.split()  # a whole word, not a cut one


def test_no_context_for_empty_or_long_memories() -> None:
    assert context_text("", "Yes.") is None
    assert context_text("Did you go?", "  ") is None
    assert context_text("Did you go?", "x" * (MAX_CONTENT_CHARS + 1)) is None
