from exocortex.core.domain.tags import alias_map, expand_aliases, normalize_tags
from exocortex.core.domain.text import content_hash, strip_private


def test_strip_private_removes_blocks_across_lines_and_case() -> None:
    text = "keep this <PRIVATE>secret\nkey=sk-123</private> and this\n\n\n\nend"
    assert strip_private(text) == "keep this  and this\n\nend"


def test_strip_private_unclosed_block_never_leaks() -> None:
    assert strip_private("visible <private>oops no closing tag sk-999") == "visible"


def test_strip_private_all_private_is_empty() -> None:
    assert strip_private("<private>only secret</private>   ") == ""


def test_content_hash_normalises_whitespace_and_case() -> None:
    assert content_hash("Hello   World\n") == content_hash("hello world")
    assert content_hash("Hello World", normalize_whitespace=False) != content_hash("hello world")


def test_normalize_tags_and_aliases() -> None:
    aliases = alias_map({"tags.alias_map": '{"reactjs": "react"}', "tag_alias.js": "javascript"})
    assert normalize_tags([" Machine_Learning ", "ReactJS", "js", "react", ""], aliases) == [
        "machine-learning",
        "react",
        "javascript",
    ]


def test_expand_aliases_both_directions() -> None:
    aliases = {"js": "javascript"}
    assert expand_aliases(["js"], aliases) == ["javascript", "js"]
    assert expand_aliases(["javascript"], aliases) == ["javascript", "js"]
