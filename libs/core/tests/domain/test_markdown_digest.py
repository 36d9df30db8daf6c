import json
import re
from datetime import date

from exocortex.core.domain.digest import digest_transcript
from exocortex.core.domain.markdown import split_sections
from exocortex.core.domain.metadata import infer_is_metadata


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


LONG = "This section has enough body text to stand on its own as a memory. " * 2


def test_sections_split_at_h2_and_keep_headers() -> None:
    doc = f"Intro paragraph. {LONG}\n\n## First\n{LONG}\n### Sub\n{LONG}\n## Second\n{LONG}"
    sections = split_sections(doc)
    assert len(sections) == 3
    assert sections[1].text.startswith("## First")
    assert "### Sub" in sections[1].text  # deeper headers do not split


def test_short_sections_merge_into_neighbours_without_losing_text() -> None:
    doc = f"## Tiny\nshort\n## Big\n{LONG}\n## Small\nalso short\n## Last\n{LONG}"
    sections = split_sections(doc)
    assert len(sections) == 2
    assert sections[0].text.startswith("## Tiny")
    assert "also short" in sections[0].text
    assert _norm(" ".join(s.text for s in sections)) == _norm(doc)


def test_empty_document_has_no_sections() -> None:
    assert split_sections("\n\n   \n") == []


def _line(*blocks: dict[str, object], kind: str = "assistant") -> str:
    return json.dumps({"type": kind, "message": {"content": list(blocks)}})


def _tool(name: str, **data: object) -> dict[str, object]:
    return {"type": "tool_use", "name": name, "input": data}


def test_digest_keeps_changes_and_drops_reads_and_own_tools() -> None:
    transcript = "\n".join(
        [
            _line(_tool("Read", file_path="/home/u/work/atlas/src/a.py")),
            _line(_tool("Edit", file_path="/home/u/work/atlas/src/a.py")),
            _line(_tool("Edit", file_path="/home/u/work/atlas/src/a.py")),
            _line(_tool("Write", file_path="/home/u/work/atlas/src/b.py")),
            _line(_tool("Bash", command="pytest -q")),
            _line(_tool("mcp__exocortex__memory_store", content="x")),
            _line(_tool("WebFetch", url="https://example.org/doc")),
            "{not json",
            _line({"type": "text", "text": "We decided to use a queue instead of polling."}),
            _line(_tool("Edit", file_path="/x"), kind="user"),
        ]
    )
    digest = digest_transcript(transcript)
    assert digest.project == "atlas"
    assert digest.files == ["/home/u/work/atlas/src/a.py", "/home/u/work/atlas/src/b.py"]
    assert digest.actions == [
        "Edit /home/u/work/atlas/src/a.py",
        "Write /home/u/work/atlas/src/b.py",
        "Bash: pytest -q",
        "WebFetch https://example.org/doc",
    ]
    assert digest.commands == 1
    assert digest.facts == [("decision", "We decided to use a queue instead of polling.")]
    text = digest.render(date(2026, 11, 29))
    assert text.startswith("Session 2026-11-29 (project: atlas)")
    assert "memory_store" not in text
    assert "Read" not in text


def test_metadata_inference() -> None:
    settings = {"search.metadata_tags": "benchmark-artifact,goal-progress"}
    assert infer_is_metadata(explicit=None, benchmark=True, tags=[], metadata={}, settings=settings)
    assert infer_is_metadata(
        explicit=None, benchmark=False, tags=["goal-progress"], metadata={}, settings=settings
    )
    assert infer_is_metadata(
        explicit=None, benchmark=False, tags=[], metadata={"kind": "alert"}, settings=settings
    )
    assert not infer_is_metadata(
        explicit=False, benchmark=True, tags=[], metadata={}, settings=settings
    )
    assert not infer_is_metadata(
        explicit=None, benchmark=False, tags=["notes"], metadata={}, settings=settings
    )
