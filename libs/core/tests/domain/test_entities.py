import json
from pathlib import Path

from exocortex.core.domain.entities import extract_entities, extract_relationships


def _names(text: str) -> dict[str, str]:
    return {e.name: e.type for e in extract_entities(text)}


def test_technologies_organisations_people_projects() -> None:
    found = _names(
        "The Atlas project was created by Ada Lovelace at Acme Labs. It uses PostgreSQL "
        "and NATS, and Google hosts the demo."
    )
    assert found["PostgreSQL"] == "technology"
    assert found["NATS"] == "technology"
    assert found["Acme Labs"] == "organization"
    assert found["Google"] == "organization"
    assert found["Ada Lovelace"] == "person"
    assert found["Atlas"] == "project"


def test_known_false_positives_are_avoided() -> None:
    found = _names("Let us go and spring into action; building AI tools is production-ready work.")
    assert "go" not in {n.lower() for n in found}
    assert "Spring" not in found
    assert not any(n.lower().startswith("building") for n in found)


def test_capitalised_ambiguous_words_are_technologies() -> None:
    found = _names("The indexer is written in Rust and the CLI in Go.")
    assert found["Rust"] == "technology"
    assert found["Go"] == "technology"


def test_relationship_with_context_phrase() -> None:
    text = "Exocortex uses NATS for real-time event streaming."
    entities = extract_entities(text + " Exocortex project.")
    rels = extract_relationships(text, entities)
    assert len(rels) == 1
    rel = rels[0]
    assert (rel.source, rel.relationship, rel.target) == ("Exocortex", "uses", "NATS")
    assert rel.context == "for real-time event streaming"


def test_no_self_relationships() -> None:
    entities = extract_entities("Redis uses Redis.")
    assert extract_relationships("Redis uses Redis.", entities) == []


def test_the_original_technology_list_is_covered() -> None:
    """Every technology the original extractor knew is found, under its display name."""
    found = {
        e.name: e.type
        for e in extract_entities(
            "The API runs on Fastify with PostgreSQL; the admin is a Django app, the site Nuxt "
            "on Laravel, the desktop app Tauri or Electron, and React Native on phones."
        )
    }
    for name in ("Fastify", "PostgreSQL", "Django", "Nuxt", "Laravel", "Tauri", "Electron"):
        assert found.get(name) == "technology", name
    assert found.get("React Native") == "technology"
    assert {e.name for e in extract_entities("Built with nodejs and nextjs")} >= {
        "Node.js",
        "Next.js",
    }


def test_project_cues_open_sentences_too() -> None:
    names = {
        e.name: e.type
        for e in extract_entities(
            "Shipped Orion on Monday. Our projects: Hermes. We created Zephyr."
        )
    }
    assert names == {"Orion": "project", "Hermes": "project", "Zephyr": "project"}


LABELLED = Path(__file__).parent / "data" / "entities_labelled.json"


def test_precision_and_recall_on_the_labelled_sentences() -> None:
    """A small hand-labelled set (technologies, organisations, people, projects, concepts and
    sentences with none): an entity counts when its name and type are both right. The figures
    are in docs/write-path.md; a change that costs either fails here."""
    right = wrong = missed = 0
    for item in json.loads(LABELLED.read_text()):
        got = {e.name: e.type for e in extract_entities(item["text"]) if e.confidence >= 0.5}
        want: dict[str, str] = item["entities"]
        right += sum(want.get(name) == kind for name, kind in got.items())
        wrong += sum(want.get(name) != kind for name, kind in got.items())
        missed += sum(got.get(name) != kind for name, kind in want.items())
    precision, recall = right / (right + wrong), right / (right + missed)
    assert precision == 1.0, precision
    assert recall == 1.0, recall
