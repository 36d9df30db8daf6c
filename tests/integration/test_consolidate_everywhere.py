"""Consolidation naming no namespace, by a caller who may see every namespace (a keyless
gateway): the original clustered everything; here every namespace is clustered on its own,
over all of them, and no cluster ever joins memories of two namespaces."""

from __future__ import annotations

import uuid

import httpx

from exocortex.testing.rest import store, wait_all_enriched

# One subject told several ways (similar, but not so close that dedup folds them together).
WORDINGS = [
    "The nightly Postgres backup runs at 01:30 and is copied to the offsite bucket.",
    "Postgres backups: every night at 01:30 a dump goes to the offsite storage bucket.",
    "Our database backup job dumps Postgres nightly and uploads the file offsite.",
    "Backup of the Postgres database happens each night; the dump is stored offsite.",
]


async def test_consolidation_without_a_namespace_clusters_each_namespace_apart(
    api: httpx.AsyncClient,
) -> None:
    token = uuid.uuid4().hex[:10]
    both, half = f"t-{token}-both", f"t-{token}-half"
    # At least three in one namespace: a cluster of its own. Two in another: too few alone,
    # and they must not join the first namespace's cluster.
    mine = [await store(api, both, text, tags=["backups"]) for text in WORDINGS]
    theirs = [await store(api, half, text, tags=["backups"]) for text in WORDINGS[:2]]
    await wait_all_enriched(api, *mine, *theirs)
    # Dedup may fold two wordings into one memory; at least three stay apart.
    mine, theirs = list(dict.fromkeys(mine)), list(dict.fromkeys(theirs))
    assert len(mine) >= 3, mine
    assert len(theirs) == 2, theirs

    reply = await api.post(
        "/api/consolidate",
        json={"min_similarity": 0.6, "min_cluster_size": 3, "wait_seconds": 300},
    )
    assert reply.status_code == 200, reply.text
    report = reply.json()
    assert report["dry_run"] is True
    assert both in report["namespaces"]
    assert half in report["namespaces"]
    ours = [c for c in report["clusters"] if set(c["memory_ids"]) & set(mine + theirs)]
    assert len(ours) == 1, ours
    assert ours[0]["namespace"] == both
    assert set(ours[0]["memory_ids"]) == set(mine)
    for memory_id in mine + theirs:
        assert (await api.get(f"/api/memories/{memory_id}")).json()["is_active"] is True
