"""File names made from data, and the check that a file written under one stays in its folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from exocortex.core.domain.safe_paths import UnsafeName, check_name, file_stem, safe_child


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "../x.md",
        "../../etc/passwd",
        "/etc/passwd",
        "/tmp/x.md",
        "a/b.md",
        "a\\b.md",
        "..\\..\\x.md",
        "a\x00.md",
        "a\nb.md",
        "CON",
        "con.md",
        "Lpt1.txt",
        "NUL",
        "trailing.",
        "trailing ",
        "x" * 300,
    ],
)
def test_unsafe_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(UnsafeName):
        safe_child(tmp_path, name)


@pytest.mark.parametrize("name", ["01J0000000000000000000000A.md", "a b (c).md", "..x.md"])
def test_plain_names_stay_in_the_folder(tmp_path: Path, name: str) -> None:
    path = safe_child(tmp_path, "Memories", name)
    assert path == tmp_path / "Memories" / name
    assert path.resolve().is_relative_to(tmp_path.resolve())


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Memories").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeName, match="leads out"):
        safe_child(vault, "Memories", "a.md")
    # A link that stays inside the folder is fine.
    (vault / "real").mkdir()
    (vault / "alias").symlink_to(vault / "real", target_is_directory=True)
    assert safe_child(vault, "alias", "a.md") == vault / "alias" / "a.md"


def test_a_name_needs_at_least_one_component(tmp_path: Path) -> None:
    with pytest.raises(UnsafeName):
        safe_child(tmp_path)


@pytest.mark.parametrize(
    ("text", "stem"),
    [
        ("../../x", "x"),
        ("a/../b", "a .. b"),
        ("/etc/passwd", "etc passwd"),
        ("C:\\Windows\\system32", "C Windows system32"),
        ("..", "untitled"),
        ("", "untitled"),
        ("a\x00b", "a b"),
        ("con", "_con"),
        ("  Plan: v2 [draft]?  ", "Plan v2 draft"),
        ("line one\nline two", "line one line two"),
    ],
)
def test_file_stem_makes_a_safe_name(text: str, stem: str) -> None:
    assert file_stem(text) == stem
    assert check_name(file_stem(text) + ".md")


def test_file_stem_is_bounded() -> None:
    assert len(file_stem("x" * 1000)) == 100
    check_name(file_stem("é" * 100) + ".md.partial")
