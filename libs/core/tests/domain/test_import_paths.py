"""Paths into the import folder: what the text of a path may say, and where it really leads."""

from __future__ import annotations

from pathlib import Path, PurePath

import pytest

from exocortex.core.domain.import_paths import confine, relative_import_path
from exocortex.core.errors import InvalidArgument, PermissionDenied

ROOT = PurePath("/srv/import")


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "~/.ssh/id_rsa",
        "~root/.ssh/*",
        "../etc/passwd",
        "notes/../../etc/passwd",
        "/etc/passwd",
        "/srv/import-other/a.md",
        "/srv/import/../etc/passwd",
        "*/secret.md",
        "notes/**/a.md",
        "/srv/import",
        "a\x00.md",
    ],
)
def test_refused_by_its_text(raw: str) -> None:
    with pytest.raises(InvalidArgument):
        relative_import_path(ROOT, raw, field="path")


@pytest.mark.parametrize(
    ("raw", "relative"),
    [("notes/a.md", "notes/a.md"), ("/srv/import/notes/*.md", "notes/*.md"), ("a?.md", "a?.md")],
)
def test_inside_the_folder(raw: str, relative: str) -> None:
    assert relative_import_path(ROOT, raw, field="path") == PurePath(relative)


def test_symbolic_links_out_of_the_folder_refuse_the_request(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "notes").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "notes" / "a.md").write_text("a")
    (root / "notes" / "inner.md").symlink_to(root / "notes" / "a.md")
    assert confine(root, "notes/a.md", field="path") == [(root / "notes" / "a.md").resolve()]
    # A link that stays inside is followed; the glob lists each real file.
    assert len(confine(root, "notes/*.md", field="path")) == 2
    assert confine(root, "notes/missing.md", field="path") == []
    (root / "notes" / "leak.md").symlink_to(outside / "secret.md")
    (root / "out").symlink_to(outside, target_is_directory=True)
    for raw in ["notes/leak.md", "notes/*.md", "out/secret.md", "out/*"]:
        with pytest.raises(PermissionDenied):
            confine(root, raw, field="path")
