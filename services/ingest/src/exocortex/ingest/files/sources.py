"""Reading documents from the import folder, and only from there: with no folder set, no file
is read from this machine's disk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from exocortex.core.domain.import_paths import SEND_CONTENT, SEND_TRANSCRIPT, confine
from exocortex.core.errors import InvalidArgument, NotFound, PermissionDenied, TooLarge
from exocortex.ingest.files.model import MarkdownFile

MAX_FILES = 200
MAX_FILE_BYTES = 5_000_000


def resolve(files: Sequence[MarkdownFile], import_root: Path | None) -> list[tuple[str, str]]:
    """(source_uri, text) pairs: given text as is; a file without text is a path (or a glob in
    its file name part) read from the import folder, and only there: with no folder set, no
    file is read from this machine's disk."""
    out: list[tuple[str, str]] = []
    for i, f in enumerate(files):
        if f.content:
            if not f.source_uri:
                raise InvalidArgument(
                    "source_uri names the document; it is required", field=f"files.{i}.source_uri"
                )
            out.append((f.source_uri, f.content))
            continue
        where = f"files.{i}.source_uri"
        paths = _confined(import_root, f.source_uri, where)
        if not paths:
            raise NotFound(f"no file in the import folder matches {f.source_uri}", field=where)
        if len(out) + len(paths) > MAX_FILES:
            # Counted before reading, so a broad pattern costs no reads.
            raise InvalidArgument(f"at most {MAX_FILES} files per call", field="files")
        for path in paths:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise TooLarge(f"{path} is over {MAX_FILE_BYTES} bytes", field=where)
            out.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
    if len(out) > MAX_FILES:
        raise InvalidArgument(f"at most {MAX_FILES} files per call", field="files")
    return out


def _confined(
    import_root: Path | None, raw: str, field: str, refusal: str = SEND_CONTENT
) -> list[Path]:
    # Checked here as well as in the gateway: this process is the one that reads the disk, and
    # a gRPC caller need not be the gateway.
    if import_root is None:
        raise PermissionDenied(refusal, field=field)
    return confine(import_root, raw, field=field)


def read_transcript(import_root: Path | None, raw_path: str) -> tuple[str, str]:
    """(source_uri, text) of one transcript in the import folder."""
    paths = _confined(import_root, raw_path, "transcript_path", SEND_TRANSCRIPT)
    if len(paths) != 1:
        raise NotFound(f"no single transcript at {raw_path}", field="transcript_path")
    path = paths[0]
    if path.stat().st_size > MAX_FILE_BYTES * 10:
        raise TooLarge(f"{raw_path} is over {MAX_FILE_BYTES * 10} bytes", field="transcript_path")
    return str(path), path.read_text(encoding="utf-8", errors="replace")
