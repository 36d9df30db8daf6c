"""Reading the user's files into what the API takes: memories for ``/api/memories/import`` and
markdown documents for ``/api/memories/ingest`` (split at ``##`` headers by the server, so a
re-import of the same file replaces its sections instead of duplicating them).

Formats: a JSON backup (``exo export``) or a JSON array of ``{content, …}`` objects or strings;
Markdown and text files; chat exports: Claude Code JSONL transcripts, ChatGPT
``conversations.json`` and plain chat text (blocks separated by blank lines); the reference
product's SQLite database (or a backup of it), version 1 JSON export and encrypted ``.enc``
export, converted to an export document (``exocortex.core.reference``)."""

from __future__ import annotations

import glob
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from exocortex.core.reference import convert, sources

Format = Literal["auto", "json", "markdown", "chat"]
FORMATS: tuple[Format, ...] = ("auto", "json", "markdown", "chat")
SUFFIXES = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "markdown",
    ".jsonl": "chat",
}
# Asks for the passphrase of an encrypted file (only when one is met).
Passphrase = Callable[[Path], str]
# The fields an import item may carry (the store request's); anything else in a file is left out.
ITEM_FIELDS = frozenset(
    {
        "content", "namespace", "tags", "content_type", "source_uri", "importance", "valence",
        "metadata", "is_metadata", "expires_at", "provider", "model_id", "model_name", "agent",
        "session_id", "conversation_id",
    }
)  # fmt: skip


class ImportFileError(Exception):
    """A file that cannot be read as the format asked; the message names it."""


class WrongPassphrase(ImportFileError):
    """The passphrase does not open an encrypted export."""


@dataclass
class Document:
    name: str
    content: str


@dataclass
class Plan:
    """Everything one ``exo import`` will send."""

    memories: list[dict[str, Any]] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    # Export documents (GET /api/export) restored exactly: ids, links, entities, goals.
    restores: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # The reference product's database or exports, converted to export documents.
    references: list[tuple[str, convert.Conversion]] = field(default_factory=list)
    per_file: list[tuple[str, str, int]] = field(default_factory=list)  # path, format, items
    left_out: list[str] = field(default_factory=list)  # what was not imported, and why


def expand(patterns: Iterable[str]) -> list[Path]:
    """Files named by paths, folders (everything importable below them) and globs
    (``notes/**/*.md``), in a stable order, each once."""
    seen: dict[Path, None] = {}
    for pattern in patterns:
        path = Path(pattern).expanduser()
        if path.is_dir():
            matches = [p for p in sorted(path.rglob("*")) if p.suffix.lower() in SUFFIXES]
        elif path.exists():
            matches = [path]
        else:
            matches = [Path(p) for p in sorted(glob.glob(str(path), recursive=True))]
            if not matches:
                raise ImportFileError(f"{pattern}: no such file, folder or matching glob")
        for match in matches:
            if match.is_file():
                seen.setdefault(match.resolve(), None)
    return list(seen)


def plan(
    paths: list[Path],
    fmt: Format,
    *,
    namespace: str | None,
    tags: list[str],
    passphrase: Passphrase | None = None,
    decrypt: bool = False,
) -> Plan:
    """``decrypt``: every JSON file is the reference's encrypted export (as ``.enc`` files
    are); ``passphrase`` is asked for the first time one is met."""
    out = Plan()
    for path in paths:
        reference = _reference(path, fmt, decrypt=decrypt, passphrase=passphrase)
        if reference is not None:
            _add_reference(out, path, reference, namespace=namespace, tags=tags)
            continue
        kind = fmt if fmt != "auto" else SUFFIXES.get(path.suffix.lower())
        if kind is None:
            out.left_out.append(f"{path}: unknown kind of file (use --format)")
            continue
        text = _read(path)
        if kind == "markdown":
            out.documents.append(Document(str(path), text))
            out.per_file.append((str(path), "markdown", 1))
            continue
        if kind == "json":
            document = _export_document(path, text)
            if document is not None and not (namespace or tags):
                out.restores.append((str(path), document))
                out.per_file.append((str(path), "export (restored exactly)", item_count(document)))
                continue
            if document is not None:
                out.left_out.append(
                    f"{path}: an export imported as new memories into the namespace given "
                    "(ids, links, entities and goals are not kept; without -n/-t it is "
                    "restored exactly)"
                )
        items = list(_json_items(path, text, out) if kind == "json" else _chat_items(path, text))
        for item in items:
            item.setdefault("source_uri", str(path))
            if namespace:
                item["namespace"] = namespace
            if tags:
                item["tags"] = sorted({*item.get("tags", []), *tags})
        out.memories.extend(items)
        out.per_file.append((str(path), kind, len(items)))
    return out


def _reference(
    path: Path, fmt: Format, *, decrypt: bool, passphrase: Passphrase | None
) -> sources.ReferenceData | None:
    """The reference product's rows when ``path`` is one of its files, else None."""
    if fmt not in ("auto", "json"):
        return None
    kind = sources.kind_of(path)
    if decrypt and path.suffix.lower() in (".json", ".enc"):
        kind = "encrypted"
    try:
        if kind == "sqlite":
            return sources.read_sqlite(path)
        if kind == "encrypted":
            if passphrase is None:
                raise ImportFileError(f"{path}: an encrypted export needs its passphrase")
            return sources.read_backup_v1(
                sources.parse_json(sources.decrypt(path.read_bytes(), passphrase(path)))
            )
        if path.suffix.lower() != ".json":
            return None
        document = json.loads(_read(path))
        return sources.read_backup_v1(document) if sources.is_backup_v1(document) else None
    except json.JSONDecodeError as exc:
        raise ImportFileError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except sources.WrongPassphrase as exc:
        raise WrongPassphrase(f"{path}: {exc}") from None
    except sources.ReferenceError as exc:
        raise ImportFileError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ImportFileError(f"{path}: {exc.strerror}") from None


def _add_reference(
    out: Plan, path: Path, data: sources.ReferenceData, *, namespace: str | None, tags: list[str]
) -> None:
    conversion = convert.to_export(data, namespace=namespace)
    if tags:
        for memory in conversion.document["memories"]:
            memory["tags"] = sorted({*memory.get("tags", []), *tags})
    out.references.append((str(path), conversion))
    label = {"sqlite": "reference database", "json": "reference export", "encrypted":
             "reference export (encrypted)"}[data.kind]  # fmt: skip
    out.per_file.append((str(path), label, sum(conversion.counts().values())))
    for left in conversion.left_out:
        out.left_out.append(f"{path}: {left.count} {left.kind}: {left.reason}")


def _export_document(path: Path, text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict) and "version" in data and isinstance(data.get("memories"), list):
        return data
    return None


def item_count(document: dict[str, Any]) -> int:
    return sum(len(v) for v in document.values() if isinstance(v, list))


# Keys of an export document that describe it rather than hold rows.
_HEADER = frozenset({"version", "exported_at", "namespace"})


def restore_parts(document: dict[str, Any], max_bytes: int) -> Iterator[tuple[dict[str, Any], int]]:
    """An export document cut into smaller export documents (with their item counts) that
    restored in order give the whole: every section keeps its order, and a section starts only
    once the ones before it (which it may refer to) are sent."""
    header = {k: v for k, v in document.items() if k in _HEADER}
    part: dict[str, Any] = {**header, "memories": []}
    weight = items = 0
    for section, value in document.items():
        if section in _HEADER:
            continue
        rows = value if isinstance(value, list) else [value]
        for row in rows:
            cost = len(json.dumps(row, ensure_ascii=False, default=str).encode()) + 1
            if items and weight + cost > max_bytes:
                yield part, items
                part, weight, items = {**header, "memories": []}, 0, 0
            if isinstance(value, list):
                part.setdefault(section, []).append(row)
            else:
                part[section] = row
            weight += cost
            items += 1
    if items:
        yield part, items


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ImportFileError(f"{path}: {exc.strerror}") from None


def _json_items(path: Path, text: str, out: Plan) -> Iterator[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, list) and data and isinstance(data[0], dict) and "mapping" in data[0]:
        yield from _chatgpt(path, data)
        return
    raw = data.get("memories") if isinstance(data, dict) else data
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        raw = data["results"]  # mem0's get_all / search answer
    if not isinstance(raw, list):
        raise ImportFileError(
            f"{path}: expected a backup (with `memories`), or a list of memories or strings"
        )
    archived = chunks = 0
    for entry in raw:
        if isinstance(entry, str):
            yield {"content": entry}
            continue
        if not isinstance(entry, dict):
            continue
        if "memory" in entry and "content" not in entry:
            yield _mem0(entry)
            continue
        # A backup also holds archived memories and the chunk rows of long ones: the chunks
        # are made again from their parent, archived memories stay out of a live store.
        if entry.get("parent_id"):
            chunks += 1
            continue
        if entry.get("is_active") is False:
            archived += 1
            continue
        yield {k: v for k, v in entry.items() if k in ITEM_FIELDS and v is not None}
    if archived:
        out.left_out.append(f"{path}: {archived} archived memories (not imported)")
    if chunks:
        out.left_out.append(f"{path}: {chunks} chunk rows (made again from their memory)")


def _mem0(entry: dict[str, Any]) -> dict[str, Any]:
    """A mem0 memory (``{id, memory, metadata, categories, user_id, agent_id, run_id,
    created_at}``): its text, its categories as tags, the rest kept in the metadata (a store
    here takes no creation time of its own)."""
    metadata = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
    origin = {
        f"mem0_{k}": entry[k]
        for k in ("id", "user_id", "agent_id", "run_id", "created_at", "updated_at")
        if entry.get(k) is not None
    }
    item: dict[str, Any] = {
        "content": str(entry["memory"]),
        "metadata": {**(metadata or {}), **origin},
    }
    categories = entry.get("categories")
    if isinstance(categories, list):
        item["tags"] = [str(c) for c in categories if str(c).strip()]
    if entry.get("agent_id"):
        item["agent"] = str(entry["agent_id"])
    if entry.get("run_id"):
        item["session_id"] = str(entry["run_id"])
    return item


def _chat_items(path: Path, text: str) -> Iterator[dict[str, Any]]:
    if path.suffix.lower() == ".jsonl":
        yield from _claude_code(path, text)
        return
    for block in text.split("\n\n"):
        if block.strip():
            yield {"content": block.strip(), "content_type": "conversation"}


def _text_of(content: Any) -> str:
    """The readable text of a message: a string, or the ``text`` blocks of a block list (tool
    calls and results are left out)."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n\n".join(p.strip() for p in parts if p.strip())
    return ""


def _claude_code(path: Path, text: str) -> Iterator[dict[str, Any]]:
    """A Claude Code transcript: one memory per exchange (a prompt and the replies to it)."""
    exchange: dict[str, Any] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            raise ImportFileError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(event, dict) or event.get("type") not in ("user", "assistant"):
            continue
        if event.get("isMeta") or event.get("isSidechain"):
            continue
        said = _text_of((event.get("message") or {}).get("content"))
        if not said:
            continue
        if event["type"] == "user":
            if exchange:
                yield _exchange(exchange)
            exchange = {"user": said, "replies": [], "event": event}
        elif exchange is not None:
            exchange["replies"].append(said)
    if exchange:
        yield _exchange(exchange)


def _exchange(exchange: dict[str, Any]) -> dict[str, Any]:
    event = exchange["event"]
    content = f"User: {exchange['user']}"
    if exchange["replies"]:
        content += "\n\nAssistant: " + "\n\n".join(exchange["replies"])
    item: dict[str, Any] = {
        "content": content,
        "content_type": "conversation",
        "agent": "claude-code",
        "metadata": {k: event[k] for k in ("timestamp", "cwd", "gitBranch") if event.get(k)},
    }
    if event.get("sessionId"):
        item["session_id"] = item["conversation_id"] = str(event["sessionId"])
    return item


def _chatgpt(path: Path, conversations: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A ChatGPT export: one memory per exchange, in message order."""
    for conversation in conversations:
        nodes = [n.get("message") for n in (conversation.get("mapping") or {}).values()]
        messages = sorted(
            (m for m in nodes if isinstance(m, dict)), key=lambda m: m.get("create_time") or 0
        )
        current: list[str] = []
        for message in messages:
            role = (message.get("author") or {}).get("role")
            parts = (message.get("content") or {}).get("parts") or []
            said = "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
            if role not in ("user", "assistant") or not said:
                continue
            if role == "user" and current:
                yield _chat_memory(conversation, current, path)
                current = []
            current.append(f"{'User' if role == 'user' else 'Assistant'}: {said}")
        if current:
            yield _chat_memory(conversation, current, path)


def _chat_memory(conversation: dict[str, Any], lines: list[str], path: Path) -> dict[str, Any]:
    item: dict[str, Any] = {
        "content": "\n\n".join(lines),
        "content_type": "conversation",
        "source_uri": str(path),
        "metadata": {"title": conversation.get("title") or ""},
    }
    if conversation.get("id"):
        item["conversation_id"] = str(conversation["id"])
    return item


def batches(
    items: list[dict[str, Any]], size: int, max_bytes: int
) -> Iterator[list[dict[str, Any]]]:
    """Consecutive slices of at most ``size`` items and about ``max_bytes`` of JSON (the
    gateway refuses bodies over its limit)."""
    batch: list[dict[str, Any]] = []
    weight = 0
    for item in items:
        cost = len(json.dumps(item, ensure_ascii=False).encode()) + 1
        if batch and (len(batch) >= size or weight + cost > max_bytes):
            yield batch
            batch, weight = [], 0
        batch.append(item)
        weight += cost
    if batch:
        yield batch


def document_batches(docs: list[Document], size: int, max_bytes: int) -> Iterator[list[Document]]:
    batch: list[Document] = []
    weight = 0
    for doc in docs:
        cost = len(doc.content.encode()) + len(doc.name) + 64
        if batch and (len(batch) >= size or weight + cost > max_bytes):
            yield batch
            batch, weight = [], 0
        batch.append(doc)
        weight += cost
    if batch:
        yield batch
