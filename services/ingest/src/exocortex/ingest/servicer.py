"""The Ingest gRPC service: its RPCs, grouped by capability, joined into one servicer. Each part
only converts protobuf to the domain types of its service and back."""

from __future__ import annotations

from collections.abc import Callable

from exocortex.core.db.pool import Pool
from exocortex.ingest.files.service import FileIngest
from exocortex.ingest.files.servicer import FileRpcs
from exocortex.ingest.store.bulk_import import BulkImporter
from exocortex.ingest.store.service import StoreService
from exocortex.ingest.store.servicer import StoreRpcs
from exocortex.ingest.update.service import UpdateService
from exocortex.ingest.update.servicer import UpdateRpcs
from exocortex.proto.v1 import ingest_pb2_grpc


class IngestServicer(StoreRpcs, UpdateRpcs, FileRpcs, ingest_pb2_grpc.IngestServicer):
    def __init__(
        self,
        pool: Pool,
        store: StoreService,
        updates: UpdateService,
        importer: BulkImporter,
        files: FileIngest,
        notify: Callable[[], None],
    ) -> None:
        self._pool = pool
        self._store = store
        self._updates = updates
        self._importer = importer
        self._files = files
        self._notify = notify
