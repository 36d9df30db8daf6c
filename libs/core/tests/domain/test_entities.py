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
