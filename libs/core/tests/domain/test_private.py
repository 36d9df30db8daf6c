"""``<private>`` removal: every shape of tag, nesting, unclosed blocks, and linear time on
adversarial input."""

from __future__ import annotations

import json
import time
from datetime import date
from typing import SupportsIndex

import pytest

from exocortex.core.domain.digest import digest_transcript
from exocortex.core.domain.markdown import split_sections
from exocortex.core.domain.tags import normalize_tag, normalize_tags
from exocortex.core.domain.text import (
    remove_private,
    strip_private,
    strip_private_field,
    strip_private_json,
)

SECRET = "sk-SECRET-42"
# How long a linear pass may take before it counts as hung (generous: a busy machine is slow).
HANG_SECONDS = 30.0


@pytest.mark.parametrize(
    "text",
    [
        f"a <private>{SECRET}</private> b",
        f"a <PRIVATE>{SECRET}</Private> b",
        f"a <private >{SECRET}</private > b",
        f'a <private class="x">{SECRET}</private> b',
        f"a <private\n  data-why='keys'>{SECRET}</private\n> b",
        f"a <private-notes>{SECRET}</private> b",
        f"a <private>x <private>{SECRET}</private> {SECRET}</private> b",
        f"a <private>x <private>y</private> <private>{SECRET}</private> {SECRET}</private> b",
        f'a <private title="1>2">{SECRET}</private> b',
        f"a <private>{SECRET}\n</private></private> b",
        f"a <prİvate>{SECRET}</prİvate> b",
    ],
)
def test_every_shape_of_block_is_removed(text: str) -> None:
    out = strip_private(text)
    assert SECRET not in out
    assert out.startswith("a ")
    assert out.endswith(" b")


def test_nested_blocks_hide_until_the_outer_one_closes() -> None:
    text = f"pub <private>one <private>two</private> {SECRET} </private>tail"
    assert strip_private(text) == "pub tail"


@pytest.mark.parametrize(
    "text",
    [
        f"visible <private>{SECRET}",
        f"visible <private class='x'>{SECRET}\nmore lines\n\n## Heading\n{SECRET}",
        f"visible <private>a<private>b</private>{SECRET}",
        f"visible <private class='never closed {SECRET}",
        "visible <private",
    ],
)
def test_an_unclosed_block_hides_the_rest(text: str) -> None:
    assert strip_private(text) == "visible"


def test_a_stray_closing_tag_is_dropped_and_reveals_nothing() -> None:
    assert strip_private("before </private> after") == "before  after"
    text = f"x </private> <private>{SECRET}</private> y"
    assert SECRET not in strip_private(text)
    assert strip_private(text) == "x   y"


def test_words_that_only_look_like_tags_stay() -> None:
    text = "<privately> held, </privateer> and <privacy> stay"
    assert strip_private(text) == text


def test_text_without_blocks_is_unchanged_by_remove_private() -> None:
    text = "  two  spaces\n\n\n\nand <b>html</b>  "
    assert remove_private(text) == text


def test_multiline_block_across_a_markdown_heading_is_gone_before_splitting() -> None:
    doc = (
        f"## One\nintro <private>{SECRET}\n\n## Two\n{SECRET} still</private> after\n\n## Three\nok"
    )
    sections = [s.text for s in split_sections(strip_private(doc))]
    assert sections
    assert all(SECRET not in s for s in sections)
    assert any("after" in s for s in sections)
    assert any("ok" in s for s in sections)


def test_fields_tags_and_json_lose_their_blocks() -> None:
    assert strip_private_field(f"  Title <private>{SECRET}</private> ") == "Title"
    assert normalize_tag(f"<private>{SECRET}</private>") == ""
    assert normalize_tags(["keep", f"<private>{SECRET}</private>", f"a<private>{SECRET}"]) == [
        "keep",
        "a",
    ]
    value = {
        "note": f"x <private>{SECRET}</private>",
        f"<private>{SECRET}</private>": "value of a hidden key",
        f"k<private>{SECRET}</private>": [f"<private>{SECRET}</private>", 3, None],
        "nested": {"deep": [{"s": f"<PRIVATE a=1>{SECRET}"}]},
        "n": 1.5,
    }
    cleaned = strip_private_json(value)
    assert SECRET not in repr(cleaned)
    assert "value of a hidden key" not in repr(cleaned)
    assert cleaned == {"note": "x ", "k": ["", 3, None], "nested": {"deep": [{"s": ""}]}, "n": 1.5}


@pytest.mark.parametrize(
    "text",
    [
        "<private>" * 100_000,
        "<private" * 100_000,
        "<private " * 100_000 + ">",
        "</private" + " " * 100_000 + "x" + "</private \n" * 50_000,
        "</private>" * 100_000 + "tail",
        ("<private>" + "x" * 10) * 50_000 + "</private>" * 50_000 + "end",
        "<" * 200_000 + "private",
    ],
)
def test_adversarial_input_stays_linear(text: str) -> None:
    """The search for an opener's ``>`` only moves forward: over the whole text it reads each
    character at most once, however many openers there are (counted, not timed; the regular
    expressions are linear by construction)."""
    counted = _CountedFind(text)
    remove_private(counted)
    assert counted.scanned <= len(text), (
        f"'>' searches read {counted.scanned} characters of a {len(text)}-character text"
    )
    # And the whole removal finishes: a bound for "does not hang", not a speed claim.
    started = time.monotonic()
    strip_private(text)
    assert time.monotonic() - started < HANG_SECONDS


class _CountedFind(str):
    """A text that counts how many characters its ``find`` calls read."""

    scanned = 0

    def find(
        self, sub: str, start: SupportsIndex | None = None, *args: SupportsIndex | None
    ) -> int:
        found = super().find(sub, start, *args)
        begin = int(start or 0)
        self.scanned += (len(self) if found == -1 else found + len(sub)) - begin
        return found


def _event(*blocks: dict[str, object], ensure_ascii: bool = False) -> str:
    entry = {"type": "assistant", "message": {"content": list(blocks)}}
    return json.dumps(entry, ensure_ascii=ensure_ascii)


def _text(text: str) -> dict[str, object]:
    return {"type": "text", "text": text}


def test_session_digest_picks_nothing_from_inside_a_private_block() -> None:
    escaped = json.dumps(
        {
            "type": "assistant",
            "message": {"content": [_text(f"We decided to keep <private>{SECRET}</private> out.")]},
        }
    ).replace("<", "\\u003c")
    transcript = "\n".join(
        [
            _event(_text(f"We decided to rotate <private>the key {SECRET}</private> weekly.")),
            _event(
                {
                    "type": "tool_use",
                    "name": "Bash",
                    "input": {"command": f"ls <private>{SECRET}</private>"},
                }
            ),
            escaped,
            _event(_text(f"Turns out the cause <private>was {SECRET}. We decided on it.")),
            _event(_text(f"We decided {SECRET} is fine.</private> The approach is sound here.")),
        ]
    )
    digest = digest_transcript(transcript, project=f"atlas<private>{SECRET}</private>")
    rendered = digest.render(date(2026, 12, 1))
    assert SECRET not in rendered
    assert digest.project == "atlas"
    assert ("decision", "We decided to rotate  weekly.") in digest.facts
    assert [a for a in digest.actions if a.startswith("Bash: ls")]
    # The block spanned two events: the text after it is kept, nothing from inside it.
    assert any(text.endswith("The approach is sound here.") for _, text in digest.facts)


def test_an_unclosed_block_in_a_transcript_hides_the_rest_of_the_session() -> None:
    transcript = "\n".join(
        [
            _event(_text("We decided to ship on Friday afternoon.")),
            _event(_text(f"<private>{SECRET}")),
            _event(_text(f"We decided {SECRET} goes in the vault.")),
        ]
    )
    digest = digest_transcript(transcript)
    assert digest.facts == [("decision", "We decided to ship on Friday afternoon.")]
