"""Query expansion's pure parts: phrases, tag aliases, term selection, settings."""

from __future__ import annotations

from exocortex.retrieval.search.expansion import ExpansionSettings, phrases, select_terms, tag_terms


def test_phrases_are_words_over_two_chars_and_2_and_3_grams() -> None:
    assert phrases("Why did we move to Kubernetes?") == [
        "why",
        "did",
        "move",
        "kubernetes",
        "why did",
        "did we",
        "we move",
        "move to",
        "to kubernetes",
        "why did we",
        "did we move",
        "we move to",
        "move to kubernetes",
    ]
    assert "node.js" in phrases("upgrade Node.js")
    assert phrases("") == []


def test_tag_aliases_expand_both_ways() -> None:
    aliases = {"k8s": "kubernetes", "js": "javascript", "kube": "kubernetes"}
    assert tag_terms(["k8s"], aliases) == ["kubernetes"]
    assert sorted(tag_terms(["kubernetes"], aliases)) == ["k8s", "kube"]
    assert tag_terms(["python"], aliases) == []


def test_select_terms_drops_what_the_query_has_repeats_and_caps() -> None:
    chosen = select_terms(
        "deploy to Kubernetes", ["Kubernetes", "k8s", "K8S", "Helm", "", "Argo CD", "x"], 3
    )
    assert chosen == ["k8s", "Helm", "Argo CD"]


def test_settings_toggle_and_cap() -> None:
    on = ExpansionSettings.from_settings({})
    assert on.enabled
    assert on.max_terms == 15
    off = ExpansionSettings.from_settings(
        {"search.query_expansion": "false", "search.expansion_max_terms": "oops"}
    )
    assert not off.enabled
    assert off.max_terms == 15
    assert ExpansionSettings.from_settings({"tag_alias.k8s": "Kubernetes"}).tag_aliases == {
        "k8s": "kubernetes"
    }
