"""The knowledge graph's analysis: stats, bridges (betweenness centrality) and communities
(Louvain), pure so the same graph always gives the same answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx  # type: ignore[import-untyped,unused-ignore]

from exocortex.core.records import EntityRecord
from exocortex.retrieval.reads.entity_repository import GraphEdge

# Exact betweenness is O(V·E); beyond this many nodes it is estimated from sampled sources.
EXACT_BETWEENNESS_NODES = 1_000
BETWEENNESS_SAMPLES = 200


def analyse(
    entities: Sequence[EntityRecord], edges: Sequence[GraphEdge], limit: int
) -> dict[str, Any]:
    """Stats, bridges (betweenness centrality) and communities (Louvain, fixed seed).

    Deterministic: nodes and edges are added in sorted order and the community method is seeded,
    so the same graph always gives the same answer. Large graphs get sampled betweenness."""
    g: Any = nx.Graph()
    names = {e.id: e for e in entities}
    g.add_nodes_from(sorted(names))
    g.add_edges_from(
        sorted(
            {tuple(sorted((x.source_id, x.target_id))) for x in edges if x.source_id != x.target_id}
        )
    )
    n = g.number_of_nodes()
    approximate = n > EXACT_BETWEENNESS_NODES
    betweenness: dict[str, float] = (
        nx.betweenness_centrality(g, k=BETWEENNESS_SAMPLES, seed=7, normalized=True)
        if approximate
        else nx.betweenness_centrality(g, normalized=True)
        if n
        else {}
    )
    centrality = sorted(
        (
            {
                "id": node,
                "name": names[node].name,
                "type": names[node].type,
                "betweenness": round(betweenness.get(node, 0.0), 6),
                "degree": int(g.degree[node]),
            }
            for node in g.nodes
        ),
        key=lambda c: (-c["betweenness"], -c["degree"], c["name"].lower(), c["id"]),
    )[:limit]
    communities = []
    if g.number_of_edges():
        found = nx.community.louvain_communities(g, seed=7)
        groups = sorted((sorted(c) for c in found if len(c) > 1), key=lambda c: (-len(c), c[0]))
        for index, members in enumerate(groups[:limit]):
            communities.append(
                {
                    "id": index,
                    "size": len(members),
                    "members": [
                        {"id": m, "name": names[m].name, "type": names[m].type} for m in members
                    ],
                }
            )
    components = nx.number_connected_components(g) if n else 0
    return {
        "stats": {
            "nodes": n,
            "edges": g.number_of_edges(),
            "components": components,
            "avg_degree": round(2 * g.number_of_edges() / n, 4) if n else 0.0,
            "betweenness": "approximate" if approximate else "exact",
        },
        "centrality": centrality,
        "bridges": [c for c in centrality if c["betweenness"] > 0],
        "communities": communities,
    }
