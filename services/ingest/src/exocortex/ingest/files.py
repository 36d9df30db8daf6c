"""Documents turned into memories: markdown files split at ``##`` headers, and coding-agent
session transcripts summarised into one memory."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from exocortex.core.domain.digest import digest_transcript
from exocortex.core.domain.import_paths import SEND_CONTENT, SEND_TRANSCRIPT, confine
from exocortex.core.domain.markdown import split_sections
from exocortex.core.domain.tags import normalize_tag
from exocortex.core.domain.text import content_hash, remove_private, strip_private
from exocortex.core.errors import InvalidArgument, NotFound, PermissionDenied, TooLarge
from exocortex.core.logging import get_logger
from exocortex.ingest import validation
from exocortex.ingest.service import IngestService, StoreResult
from exocortex.ingest.updates import UpdateService
from exocortex.proto.v1 import common_pb2, ingest_pb2

log = get_logger(__name__)

MAX_FILES = 200
# A session digest's takeaways, each stored on its own: their tag and importance (the original's).
SESSION_FACT_TAG = "session-fact"
FACT_IMPORTANCE = 0.6
MAX_FILE_BYTES = 5_000_000


@dataclass
class FileOutcome:
    source_uri: str
    sections: int = 0
    stored: int = 0
    unchanged: int = 0
    replaced: int = 0
    memory_ids: list[str] = field(default_factory=list)


def resolve(
    files: list[ingest_pb2.MarkdownFile], import_root: Path | None
) -> list[tuple[str, str]]:
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


def _sections(text: str) -> list[str]:
    sections = [strip_private(s.text) for s in split_sections(text)]
    return [s for s in sections if s]


class FileIngest:
    def __init__(
        self, ingest: IngestService, updates: UpdateService, *, import_root: Path | None = None
    ) -> None:
        self._ingest = ingest
        self._updates = updates
        self._import_root = import_root

    async def markdown(self, req: ingest_pb2.IngestMarkdownRequest) -> list[FileOutcome]:
        if not req.files:
            raise InvalidArgument("give at least one file", field="files")
        namespace = validation.check_namespace(req.namespace)
        docs = await asyncio.to_thread(resolve, list(req.files), self._import_root)
        return [await self._one(uri, text, namespace, req) for uri, text in docs]

    async def _one(
        self, uri: str, text: str, namespace: str, req: ingest_pb2.IngestMarkdownRequest
    ) -> FileOutcome:
        # Private blocks go before the split: a block spanning a "##" heading would otherwise
        # be cut in two, and the part past the heading judged without its opening tag.
        text = remove_private(text)
        uri = validation.required_text(uri, "source_uri")
        config = await self._ingest.config()
        outcome = FileOutcome(uri)
        # A large document takes a while to split and clean: off the event loop, so the other
        # calls this process is serving keep moving meanwhile.
        sections = await asyncio.to_thread(_sections, text)
        outcome.sections = len(sections)
        wanted = {
            content_hash(s, normalize_whitespace=config.normalize_whitespace): s for s in sections
        }
        async with self._ingest.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT id, content_hash FROM memories WHERE namespace = %s AND source_uri = %s "
                "AND is_active AND parent_id IS NULL",
                (namespace, uri),
            )
            current = await cur.fetchall()
        kept = {r["content_hash"]: r["id"] for r in current if r["content_hash"] in wanted}
        # Re-ingesting replaces: sections that are gone or changed are archived (soft, so an
        # accidental re-ingest can be undone from the trash); unchanged ones stay as they are.
        for row in current:
            if row["content_hash"] not in kept or kept[row["content_hash"]] != row["id"]:
                await self._updates.set_active(row["id"], False)
                outcome.replaced += 1
        for digest, section in wanted.items():
            if digest in kept:
                outcome.unchanged += 1
                outcome.memory_ids.append(kept[digest])
                continue
            request = ingest_pb2.StoreMemoryRequest(
                content=section,
                namespace=namespace,
                tags=list(req.tags),
                content_type=req.content_type if req.HasField("content_type") else "note",
                source="import",
                source_uri=uri,
            )
            if req.HasField("importance"):
                request.importance = req.importance
            result = await self._ingest.store(request)
            outcome.stored += 1
            outcome.memory_ids.append(result.memory["id"])
        log.info("markdown ingested", sections=outcome.sections, stored=outcome.stored)
        return outcome

    async def digest(
        self, req: ingest_pb2.DigestSessionRequest
    ) -> tuple[StoreResult, str, int, int, int]:
        source_uri = ""
        if req.transcript:
            transcript = req.transcript
        elif req.transcript_path:
            source_uri, transcript = await asyncio.to_thread(
                _read_transcript, self._import_root, req.transcript_path
            )
        else:
            raise InvalidArgument("give transcript or transcript_path", field="transcript")
        digest = digest_transcript(transcript, req.project if req.HasField("project") else None)
        if not digest.actions and not digest.facts:
            raise InvalidArgument(
                "the transcript has no actions or takeaways worth keeping", field="transcript"
            )
        project_tags = [normalize_tag(digest.project)] if digest.project else []
        tags = ["session-digest", *req.tags, *project_tags]
        request = ingest_pb2.StoreMemoryRequest(
            content=digest.render(datetime.now(UTC).date()),
            namespace=req.namespace,
            tags=tags,
            content_type="summary",
            source="digest",
            metadata_json=json.dumps(
                {
                    "kind": "session-digest",
                    "project": digest.project,
                    "files_changed": len(digest.files),
                    "commands": digest.commands,
                }
            ),
            attribution=common_pb2.Attribution(
                **{k: v for k, v in _attribution(req.attribution).items() if v}
            ),
        )
        if source_uri:
            request.source_uri = source_uri
        result = await self._ingest.store(request)
        # Each takeaway is also a memory of its own, as the original stored them, so a search
        # finds the one fact instead of a whole session's summary.
        for kind, text in digest.facts:
            fact = ingest_pb2.StoreMemoryRequest(
                content=text,
                namespace=req.namespace,
                tags=[SESSION_FACT_TAG, kind, *project_tags],
                content_type="text",
                source="digest",
                importance=FACT_IMPORTANCE,
                metadata_json=json.dumps(
                    {"kind": SESSION_FACT_TAG, "fact": kind, "digest_id": result.memory["id"]}
                ),
                attribution=request.attribution,
            )
            if source_uri:
                fact.source_uri = source_uri
            await self._ingest.store(fact)
        return result, digest.project or "", len(digest.actions), len(digest.files), digest.commands


def _attribution(a: common_pb2.Attribution) -> dict[str, str]:
    return {
        k: getattr(a, k)
        for k in ("provider", "model_id", "model_name", "agent", "session_id", "conversation_id")
        if a.HasField(k)
    }


def _read_transcript(import_root: Path | None, raw_path: str) -> tuple[str, str]:
    """(source_uri, text) of one transcript in the import folder."""
    paths = _confined(import_root, raw_path, "transcript_path", SEND_TRANSCRIPT)
    if len(paths) != 1:
        raise NotFound(f"no single transcript at {raw_path}", field="transcript_path")
    path = paths[0]
    if path.stat().st_size > MAX_FILE_BYTES * 10:
        raise TooLarge(f"{raw_path} is over {MAX_FILE_BYTES * 10} bytes", field="transcript_path")
    return str(path), path.read_text(encoding="utf-8", errors="replace")
