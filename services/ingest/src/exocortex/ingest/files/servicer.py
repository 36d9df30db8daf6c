"""gRPC ↔ document service conversion only: IngestMarkdown and DigestSession."""

from __future__ import annotations

from collections.abc import Callable

import grpc

from exocortex.ingest.files.model import MarkdownFile, MarkdownImport, SessionTranscript
from exocortex.ingest.files.service import FileIngest
from exocortex.ingest.store.servicer import attribution_of, stored_proto
from exocortex.proto.v1 import ingest_pb2


class FileRpcs:
    """The document RPCs of the Ingest service (joined into one servicer in ``ingest.servicer``)."""

    _files: FileIngest
    _notify: Callable[[], None]

    async def IngestMarkdown(
        self, request: ingest_pb2.IngestMarkdownRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.IngestMarkdownResponse:
        outcomes = await self._files.markdown(
            MarkdownImport(
                namespace=request.namespace,
                files=tuple(MarkdownFile(f.source_uri, f.content) for f in request.files),
                tags=tuple(request.tags),
                content_type=request.content_type if request.HasField("content_type") else None,
                importance=request.importance if request.HasField("importance") else None,
            )
        )
        self._notify()
        return ingest_pb2.IngestMarkdownResponse(
            files=[
                ingest_pb2.IngestedFile(
                    source_uri=o.source_uri,
                    sections=o.sections,
                    stored=o.stored,
                    unchanged=o.unchanged,
                    replaced=o.replaced,
                    memory_ids=o.memory_ids,
                )
                for o in outcomes
            ],
            stored=sum(o.stored for o in outcomes),
            replaced=sum(o.replaced for o in outcomes),
        )

    async def DigestSession(
        self, request: ingest_pb2.DigestSessionRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.DigestSessionResponse:
        outcome = await self._files.digest(
            SessionTranscript(
                namespace=request.namespace,
                transcript=request.transcript,
                transcript_path=request.transcript_path,
                project=request.project if request.HasField("project") else None,
                tags=tuple(request.tags),
                attribution=attribution_of(request.attribution),
            )
        )
        self._notify()
        return ingest_pb2.DigestSessionResponse(
            stored=stored_proto(outcome.stored),
            project=outcome.project,
            actions=outcome.actions,
            files_changed=outcome.files_changed,
            commands=outcome.commands,
        )
