"""gRPC ↔ service conversion only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.repositories.memories import to_proto
from exocortex.ingest.bulk_import import BulkImporter
from exocortex.ingest.files import FileIngest
from exocortex.ingest.links import create_link, delete_link
from exocortex.ingest.relay import OutboxRelay
from exocortex.ingest.service import IngestService, StoreResult
from exocortex.ingest.updates import UpdateService
from exocortex.proto.v1 import ingest_pb2, ingest_pb2_grpc


def _stored(result: StoreResult) -> ingest_pb2.StoreMemoryResponse:
    response = ingest_pb2.StoreMemoryResponse(
        memory=to_proto(result.memory), dedup_action=result.dedup_action
    )
    if result.matched_id is not None:
        response.matched_id = result.matched_id
    if result.similarity is not None:
        response.dedup_similarity = result.similarity
    return response


def _link(row: dict[str, Any]) -> ingest_pb2.Link:
    created = Timestamp()
    created.FromDatetime(row["created_at"])
    return ingest_pb2.Link(
        source_id=row["source_id"],
        target_id=row["target_id"],
        link_type=row["link_type"],
        strength=float(row["strength"]),
        created_at=created,
    )


class IngestServicer(ingest_pb2_grpc.IngestServicer):
    def __init__(
        self, service: IngestService, relay: OutboxRelay, *, import_root: Path | None = None
    ) -> None:
        self._service = service
        self._updates = UpdateService(service)
        self._importer = BulkImporter(service)
        self._files = FileIngest(service, self._updates, import_root=import_root)
        self._relay = relay

    async def StoreMemory(
        self, request: ingest_pb2.StoreMemoryRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.StoreMemoryResponse:
        result = await self._service.store(request)
        self._relay.notify()
        return _stored(result)

    async def UpdateMemory(
        self, request: ingest_pb2.UpdateMemoryRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.MemoryReply:
        row = await self._updates.update(request)
        self._relay.notify()
        return ingest_pb2.MemoryReply(memory=to_proto(row))

    async def ArchiveMemory(
        self, request: ingest_pb2.MemoryRef, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.MemoryReply:
        row = await self._updates.set_active(request.id, False)
        self._relay.notify()
        return ingest_pb2.MemoryReply(memory=to_proto(row))

    async def RestoreMemory(
        self, request: ingest_pb2.MemoryRef, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.MemoryReply:
        row = await self._updates.set_active(request.id, True)
        self._relay.notify()
        return ingest_pb2.MemoryReply(memory=to_proto(row))

    async def DeleteMemory(
        self, request: ingest_pb2.MemoryRef, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.DeleteMemoryResponse:
        chunks = await self._updates.delete(request.id)
        self._relay.notify()
        return ingest_pb2.DeleteMemoryResponse(id=request.id, chunks_deleted=chunks)

    async def CreateLink(
        self, request: ingest_pb2.CreateLinkRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.Link:
        return _link(await create_link(self._service.pool, request))

    async def DeleteLink(
        self, request: ingest_pb2.DeleteLinkRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.DeleteLinkResponse:
        return ingest_pb2.DeleteLinkResponse(deleted=await delete_link(self._service.pool, request))

    async def ImportMemories(
        self, request: ingest_pb2.ImportMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ImportMemoriesResponse:
        results = await self._importer.run(list(request.memories))
        self._relay.notify()
        failed = sum(1 for r in results if r.dedup_action == "failed")
        return ingest_pb2.ImportMemoriesResponse(
            imported=len(results) - failed,
            failed=failed,
            results=[
                ingest_pb2.ImportItemResult(
                    index=r.index,
                    dedup_action=r.dedup_action,
                    id=r.id,
                    error=r.error,
                    field=r.field,
                )
                for r in results
            ],
        )

    async def BulkTag(
        self, request: ingest_pb2.BulkTagRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.BulkResponse:
        affected, missing = await self._updates.bulk_tag(
            list(request.ids), list(request.add_tags), list(request.remove_tags)
        )
        self._relay.notify()
        return ingest_pb2.BulkResponse(affected=affected, missing_ids=missing)

    async def BulkUpdate(
        self, request: ingest_pb2.BulkUpdateRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.BulkResponse:
        columns: dict[str, Any] = {
            name: getattr(request, name)
            for name in ("importance", "valence", "is_active")
            if request.HasField(name)
        }
        affected, missing = await self._updates.bulk_update(list(request.ids), columns)
        self._relay.notify()
        return ingest_pb2.BulkResponse(affected=affected, missing_ids=missing)

    async def IngestMarkdown(
        self, request: ingest_pb2.IngestMarkdownRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.IngestMarkdownResponse:
        outcomes = await self._files.markdown(request)
        self._relay.notify()
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
        result, project, actions, files, commands = await self._files.digest(request)
        self._relay.notify()
        return ingest_pb2.DigestSessionResponse(
            stored=_stored(result),
            project=project,
            actions=actions,
            files_changed=files,
            commands=commands,
        )
