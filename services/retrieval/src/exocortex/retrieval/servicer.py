"""The one gRPC ``Retrieval`` service, answered by the servicer of each capability: search,
memory reads, knowledge-graph reads, reports and projection (each converts only)."""

from __future__ import annotations

from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.base import VectorIndex
from exocortex.retrieval.projection.service import IndexService
from exocortex.retrieval.projection.servicer import ProjectionServicer
from exocortex.retrieval.reads.entities import EntityService
from exocortex.retrieval.reads.entity_servicer import EntityServicer
from exocortex.retrieval.reads.report_servicer import ReportServicer
from exocortex.retrieval.reads.reports import ReportService
from exocortex.retrieval.reads.service import ReadService
from exocortex.retrieval.reads.servicer import ReadsServicer
from exocortex.retrieval.reads.snapshot import SnapshotService
from exocortex.retrieval.search.service import SearchService
from exocortex.retrieval.search.servicer import SearchServicer


class RetrievalServicer(
    SearchServicer, ReadsServicer, EntityServicer, ReportServicer, ProjectionServicer
):
    """Every RPC of ``exocortex.v1.Retrieval``: each capability's servicer answers its own."""

    def __init__(
        self,
        *,
        search: SearchService,
        vector_index: VectorIndex,
        reads: ReadService,
        snapshot: SnapshotService,
        settings: SettingsCache,
        entities: EntityService,
        reports: ReportService,
        indexes: IndexService,
    ) -> None:
        SearchServicer.__init__(self, search, vector_index)
        ReadsServicer.__init__(self, reads, snapshot, settings)
        EntityServicer.__init__(self, entities, reads)
        ReportServicer.__init__(self, reports)
        ProjectionServicer.__init__(self, indexes)
