"""Documents turned into memories: markdown files split at ``##`` headers (their sections
stored through the bulk path), and coding-agent session transcripts summarised into one memory."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from exocortex.core.domain.digest import digest_transcript
from exocortex.core.domain.markdown import split_sections
from exocortex.core.domain.tags import normalize_tag
from exocortex.core.domain.text import content_hash, remove_private, strip_private
from exocortex.core.errors import ExoError, InvalidArgument
from exocortex.core.logging import get_logger
from exocortex.core.records import Attribution
from exocortex.ingest.files import repository
from exocortex.ingest.files.model import (
    DigestOutcome,
    FileOutcome,
    MarkdownImport,
    SessionTranscript,
)
from exocortex.ingest.files.sources import read_transcript, resolve
from exocortex.ingest.store import validation
from exocortex.ingest.store.bulk_import import MAX_ITEMS, BulkImporter
from exocortex.ingest.store.model import MemoryInput
from exocortex.ingest.store.service import StoreService
from exocortex.ingest.update.service import UpdateService

log = get_logger(__name__)

# A session digest's takeaways, each stored on its own: their tag and importance (the original's).
SESSION_FACT_TAG = "session-fact"
FACT_IMPORTANCE = 0.6


def _sections(text: str) -> list[str]:
    sections = [strip_private(s.text) for s in split_sections(text)]
    return [s for s in sections if s]


class FileIngest:
    def __init__(
        self, ingest: StoreService, updates: UpdateService, *, import_root: Path | None = None
    ) -> None:
        self._ingest = ingest
        self._bulk = BulkImporter(ingest)
        self._updates = updates
        self._import_root = import_root

    async def markdown(self, req: MarkdownImport) -> list[FileOutcome]:
        if not req.files:
            raise InvalidArgument("give at least one file", field="files")
        namespace = validation.check_namespace(req.namespace)
        docs = await asyncio.to_thread(resolve, req.files, self._import_root)
        return [await self._one(uri, text, namespace, req) for uri, text in docs]

    async def _one(self, uri: str, text: str, namespace: str, req: MarkdownImport) -> FileOutcome:
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
            current = await repository.active_sections(conn, namespace, uri)
        kept = {r["content_hash"]: r["id"] for r in current if r["content_hash"] in wanted}
        # Re-ingesting replaces: sections that are gone or changed are archived (soft, so an
        # accidental re-ingest can be undone from the trash); unchanged ones stay as they are.
        for row in current:
            if row["content_hash"] not in kept or kept[row["content_hash"]] != row["id"]:
                await self._updates.set_active(row["id"], False)
                outcome.replaced += 1
        new: list[str] = []
        for digest, section in wanted.items():
            if digest in kept:
                outcome.unchanged += 1
                outcome.memory_ids.append(kept[digest])
            else:
                new.append(section)
        # The new sections go through the bulk path, as an import's memories do: one model
        # call, one nearest-neighbour call and one transaction a batch of them, with the same
        # dedup, privacy and events as a store each. In the document's order in the reply.
        ids = await self._import(
            [
                MemoryInput(
                    content=section,
                    namespace=namespace,
                    tags=req.tags,
                    content_type=req.content_type if req.content_type is not None else "note",
                    source="import",
                    source_uri=uri,
                    importance=req.importance,
                )
                for section in new
            ]
        )
        outcome.stored += len(ids)
        outcome.memory_ids.extend(ids)
        log.info("markdown ingested", sections=outcome.sections, stored=outcome.stored)
        return outcome

    async def _import(self, items: list[MemoryInput]) -> list[str]:
        """The id each item became (a new memory, or the one it repeats), in order. An item
        refused (a section past the content limit) fails the call with its error, as its own
        store would, once the rest are stored."""
        ids: list[str] = []
        refused: ExoError | None = None
        for start in range(0, len(items), MAX_ITEMS):
            for result in await self._bulk.run(items[start : start + MAX_ITEMS]):
                if result.dedup_action == "failed":
                    refused = refused or result.cause or InvalidArgument(result.error)
                else:
                    ids.append(result.id)
        if refused is not None:
            raise refused
        return ids

    async def digest(self, req: SessionTranscript) -> DigestOutcome:
        source_uri = ""
        if req.transcript:
            transcript = req.transcript
        elif req.transcript_path:
            source_uri, transcript = await asyncio.to_thread(
                read_transcript, self._import_root, req.transcript_path
            )
        else:
            raise InvalidArgument("give transcript or transcript_path", field="transcript")
        digest = digest_transcript(transcript, req.project)
        if not digest.actions and not digest.facts:
            raise InvalidArgument(
                "the transcript has no actions or takeaways worth keeping", field="transcript"
            )
        project_tags = [normalize_tag(digest.project)] if digest.project else []
        tags = ["session-digest", *req.tags, *project_tags]
        # Only the attribution fields given with some text.
        attribution = Attribution(**{k: v for k, v in req.attribution.given().items() if v})
        result = await self._ingest.store(
            MemoryInput(
                content=digest.render(datetime.now(UTC).date()),
                namespace=req.namespace,
                tags=tuple(tags),
                content_type="summary",
                source="digest",
                source_uri=source_uri or None,
                metadata_json=json.dumps(
                    {
                        "kind": "session-digest",
                        "project": digest.project,
                        "files_changed": len(digest.files),
                        "commands": digest.commands,
                    }
                ),
                attribution=attribution,
            )
        )
        # Each takeaway is also a memory of its own, as the original stored them, so a search
        # finds the one fact instead of a whole session's summary.
        await self._import(
            [
                MemoryInput(
                    content=text,
                    namespace=req.namespace,
                    tags=(SESSION_FACT_TAG, kind, *project_tags),
                    content_type="text",
                    source="digest",
                    source_uri=source_uri or None,
                    importance=FACT_IMPORTANCE,
                    metadata_json=json.dumps(
                        {"kind": SESSION_FACT_TAG, "fact": kind, "digest_id": result.memory.id}
                    ),
                    attribution=attribution,
                )
                for kind, text in digest.facts
            ]
        )
        return DigestOutcome(
            result, digest.project or "", len(digest.actions), len(digest.files), digest.commands
        )
