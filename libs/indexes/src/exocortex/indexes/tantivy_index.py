"""Keyword index on tantivy: BM25 in-process, persisted in a local directory.

One `IndexWriter` lives as long as the object (tantivy allows a single writer per directory, so
only one process may open it). Writes become visible to search on `flush()`, which commits and
reloads the searcher. User text never reaches tantivy's query parser: it is split into words,
stemmed with the same analyzer the `en_stem` fields use and turned into an OR of term queries.

A filter clause that every document of the searched snapshot passes is left out: under a filter
tantivy scores every document matching any query word, without one it skips most of them
(block-max WAND). Measured at 100k memories in one namespace: 2.0 ms a search with the namespace
clause, 1.0 ms without. So a namespace that holds the whole index, and "no metadata" when the
index holds none, cost nothing; with several namespaces the clause stays and works as before.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tantivy

from exocortex.indexes._text import MAX_TERM_CHARS, query_terms
from exocortex.indexes.base import DEFAULT_KEYWORDS_BOOST, IndexDocument, IndexFilter, IndexHit

_TEXT_FIELDS = ("content", "keywords")
# How many filter terms a new snapshot counts ahead of searches (see _commit).
_RECOUNT_MAX = 64
_WRITER_HEAP_BYTES = 64_000_000
# One indexing thread. Each commit turns every writer thread that received a document into a
# segment of its own, and a segment has a fixed cost (a term dictionary builder per indexed
# field, the hash table of its arena, the merges it leads to): about 8-15 ms of CPU whether it
# holds one document or a hundred. With a thread per core, the few documents of a single
# store's batch were split into two segments; one thread halves that (measured: 38 -> 17 ms of
# CPU per commit of 2 documents, 52 -> 36 ms per 500) and indexes a 500-document batch as fast.
_WRITER_THREADS = 1
# Documents read per thread hop when listing everything the index holds.
_HELD_PAGE = 2_000


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("memory_id", stored=True, tokenizer_name="raw")
    sb.add_integer_field("version", stored=True, fast=True)
    for name in ("namespace", "content_type", "source", "tags"):
        sb.add_text_field(name, tokenizer_name="raw")
    sb.add_date_field("created_at", indexed=True, fast=True)
    sb.add_float_field("importance", indexed=True, fast=True)
    sb.add_boolean_field("is_metadata", indexed=True)
    sb.add_text_field("parent_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("content", tokenizer_name="en_stem")
    sb.add_text_field("keywords", tokenizer_name="en_stem")
    return sb.build()


def _query_analyzer() -> Any:
    # Mirrors tantivy's built-in `en_stem` so query terms equal indexed terms.
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TERM_CHARS))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


class _Snapshot:
    """A searcher (an immutable view of the index) and how many of its live documents carry
    each filter term asked about so far, so a clause every document passes can be left out
    exactly for the documents this searcher sees."""

    __slots__ = ("counts", "searcher")

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        self.counts: dict[tuple[str, str | bool], int] = {}

    def count(self, schema: Any, field_name: str, value: str | bool) -> int:
        key = (field_name, value)
        n = self.counts.get(key)
        if n is None:
            term = tantivy.Query.term_query(schema, field_name, value)
            n = int(self.searcher.search(term, 1, count=True).count)
            self.counts[key] = n
        return n


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class TantivyKeywordIndex:
    """`KeywordIndex` over a tantivy index directory at `path`."""

    name = "tantivy"

    def __init__(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self._schema = _schema()
        self._index = tantivy.Index(self._schema, path=str(path), reuse=True)
        self._writer = self._index.writer(_WRITER_HEAP_BYTES, _WRITER_THREADS)
        self._analyzer = _query_analyzer()
        # The writer is not shared between threads concurrently; searches need no lock.
        self._lock = threading.Lock()
        self._index.reload()
        self._snapshot = _Snapshot(self._index.searcher())
        self._closed = False

    def _document(self, doc: IndexDocument) -> Any:
        d = tantivy.Document()
        d.add_text("memory_id", doc.memory_id)
        d.add_integer("version", doc.version)
        d.add_text("namespace", doc.namespace)
        d.add_text("content_type", doc.content_type)
        d.add_text("source", doc.source)
        for tag in doc.tags:
            d.add_text("tags", tag)
        d.add_date("created_at", _utc(doc.created_at))
        d.add_float("importance", float(doc.importance))
        d.add_boolean("is_metadata", doc.is_metadata)
        if doc.parent_id is not None:
            d.add_text("parent_id", doc.parent_id)
        d.add_text("content", doc.content)
        d.add_text("keywords", doc.keywords)
        return d

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if docs:
            # Later documents win when an id repeats, as if applied one by one.
            last = {d.memory_id: d for d in docs}
            built = [(i, self._document(d)) for i, d in last.items()]
            await asyncio.to_thread(self._upsert, built)

    def _upsert(self, built: list[tuple[str, Any]]) -> None:
        with self._lock:
            for memory_id, document in built:
                self._writer.delete_documents_by_term("memory_id", memory_id)
                self._writer.add_document(document)

    async def delete(self, memory_ids: Sequence[str]) -> None:
        if memory_ids:
            await asyncio.to_thread(self._delete, list(memory_ids))

    def _delete(self, memory_ids: list[str]) -> None:
        with self._lock:
            for memory_id in memory_ids:
                self._writer.delete_documents_by_term("memory_id", memory_id)

    def _text_query(self, text: str, keywords_boost: float) -> Any | None:
        terms = self._analyzer.analyze(" ".join(query_terms(text)))
        if not terms:
            return None
        clauses = []
        for term in dict.fromkeys(terms):
            for field_name in _TEXT_FIELDS:
                boost = keywords_boost if field_name == "keywords" else 1.0
                q = tantivy.Query.term_query(self._schema, field_name, term)
                if boost != 1.0:
                    q = tantivy.Query.boost_query(q, boost)
                clauses.append((tantivy.Occur.Should, q))
        return tantivy.Query.boolean_query(clauses)

    def _filter_clauses(self, flt: IndexFilter, snapshot: _Snapshot) -> list[tuple[Any, Any]]:
        s = self._schema
        must: list[Any] = []
        everything = snapshot.searcher.num_docs
        if flt.namespace is not None and (
            snapshot.count(s, "namespace", flt.namespace) != everything
        ):
            must.append(tantivy.Query.term_query(s, "namespace", flt.namespace))
        if flt.namespaces_any:
            must.append(tantivy.Query.term_set_query(s, "namespace", list(flt.namespaces_any)))
        if flt.tags_any:
            must.append(tantivy.Query.term_set_query(s, "tags", list(flt.tags_any)))
        if flt.content_type is not None:
            must.append(tantivy.Query.term_query(s, "content_type", flt.content_type))
        if flt.source is not None:
            must.append(tantivy.Query.term_query(s, "source", flt.source))
        if flt.created_after is not None or flt.created_before is not None:
            must.append(
                tantivy.Query.range_query(
                    s,
                    "created_at",
                    tantivy.FieldType.Date,
                    None if flt.created_after is None else _utc(flt.created_after),
                    None if flt.created_before is None else _utc(flt.created_before),
                    include_lower=True,
                    # tantivy treats an open side as inclusive and rejects anything else.
                    include_upper=flt.created_before is None,
                )
            )
        if flt.min_importance is not None:
            must.append(
                tantivy.Query.range_query(
                    s, "importance", tantivy.FieldType.Float, float(flt.min_importance), None
                )
            )
        must_not: list[Any] = []
        if flt.exclude_metadata and snapshot.count(s, "is_metadata", True) > 0:
            must_not.append(tantivy.Query.term_query(s, "is_metadata", True))
        if flt.exclude_ids:
            ids = list(flt.exclude_ids)
            must_not.append(tantivy.Query.term_set_query(s, "memory_id", ids))
            must_not.append(tantivy.Query.term_set_query(s, "parent_id", ids))
        # Filters must not add to the BM25 score, so they are wrapped as zero-score clauses.
        return [(tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q in must] + [
            (tantivy.Occur.MustNot, q) for q in must_not
        ]

    async def search(
        self,
        query: str,
        limit: int,
        flt: IndexFilter,
        *,
        keywords_boost: float = DEFAULT_KEYWORDS_BOOST,
    ) -> list[IndexHit]:
        if limit <= 0:
            return []
        text = self._text_query(query, keywords_boost)
        if text is None:
            return []
        return await asyncio.to_thread(self._search, self._snapshot, text, flt, limit)

    def _search(
        self, snapshot: _Snapshot, text: Any, flt: IndexFilter, limit: int
    ) -> list[IndexHit]:
        # The clauses are built here, off the event loop: a term's first count in a snapshot
        # reads its postings (about 2 ms per 100k documents).
        clauses = self._filter_clauses(flt, snapshot)
        query = (
            tantivy.Query.boolean_query([(tantivy.Occur.Must, text), *clauses]) if clauses else text
        )
        searcher = snapshot.searcher
        hits: list[IndexHit] = []
        for score, address in searcher.search(query, limit, count=False).hits:
            doc = searcher.doc(address)
            hits.append(
                IndexHit(
                    memory_id=str(doc.get_first("memory_id")),
                    score=float(score),
                    parent_id=doc.get_first("parent_id"),
                )
            )
        return hits

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        if not memory_ids:
            return {}
        ids = list(dict.fromkeys(memory_ids))
        query = tantivy.Query.term_set_query(self._schema, "memory_id", ids)
        return await asyncio.to_thread(self._versions, self._snapshot.searcher, query, len(ids))

    @staticmethod
    def _versions(searcher: Any, query: Any, limit: int) -> dict[str, int]:
        out: dict[str, int] = {}
        for _score, address in searcher.search(query, limit, count=False).hits:
            doc = searcher.doc(address)
            out[str(doc.get_first("memory_id"))] = int(doc.get_first("version"))
        return out

    async def held(self) -> dict[str, int]:
        searcher = self._snapshot.searcher  # one snapshot for every page
        addresses = await asyncio.to_thread(self._addresses, searcher)
        out: dict[str, int] = {}
        for start in range(0, len(addresses), _HELD_PAGE):
            # Reading stored fields holds the interpreter: a page per thread hop lets
            # searches run between pages.
            page = addresses[start : start + _HELD_PAGE]
            out.update(await asyncio.to_thread(self._stored_versions, searcher, page))
        return out

    @staticmethod
    def _addresses(searcher: Any) -> list[Any]:
        n = int(searcher.num_docs)
        if n == 0:
            return []
        hits = searcher.search(tantivy.Query.all_query(), n, count=False).hits
        return [address for _score, address in hits]

    @staticmethod
    def _stored_versions(searcher: Any, addresses: list[Any]) -> dict[str, int]:
        out: dict[str, int] = {}
        for address in addresses:
            doc = searcher.doc(address)
            out[str(doc.get_first("memory_id"))] = int(doc.get_first("version"))
        return out

    async def count(self) -> int:
        n: int = self._snapshot.searcher.num_docs
        return n

    async def flush(self) -> None:
        await asyncio.to_thread(self._commit)

    def _commit(self) -> None:
        with self._lock:
            self._writer.commit()
            self._index.reload()
            fresh = _Snapshot(self._index.searcher())
            # Count again the terms searches used, here on the writer's side, so the first
            # search after a write does not pay for it.
            for field_name, value in list(self._snapshot.counts)[-_RECOUNT_MAX:]:
                fresh.count(self._schema, field_name, value)
            self._snapshot = fresh

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._lock:
            self._writer.commit()
            self._writer.wait_merging_threads()
