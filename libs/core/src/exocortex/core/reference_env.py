"""The reference product's environment variable names (``EXOCORTEX_*``), honoured as aliases of
this project's where they mean the same thing, so a setup moved over keeps working
(docs/migrating.md#environment-variables). This project's own name wins when both are set; a
process that took a value from a reference name says so once on start.

``EXOCORTEX_DB_PATH`` (the reference's SQLite file) has no database to name here: ``exo import``
reads it as the file to import when given no path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import AliasChoices, BaseModel
from structlog.stdlib import BoundLogger

# This project's name → the reference's names for the same setting.
REFERENCE_NAMES: dict[str, tuple[str, ...]] = {
    "EXO_GATEWAY_HOST": ("EXOCORTEX_HOST",),
    "EXO_CORS_ORIGINS": ("EXOCORTEX_CORS_ORIGINS",),
    # The reference's model cache; here the folder the embedding model's export is kept in.
    "EXO_EMBEDDING_CACHE_DIR": ("EXOCORTEX_MODEL_DIR",),
    "EXO_DEFAULT_PROVIDER": ("EXOCORTEX_DEFAULT_PROVIDER",),
    "EXO_DEFAULT_MODEL_ID": ("EXOCORTEX_DEFAULT_MODEL_ID",),
    "EXO_DEFAULT_MODEL_NAME": ("EXOCORTEX_DEFAULT_MODEL_NAME",),
    "EXO_DEFAULT_AGENT": ("EXOCORTEX_DEFAULT_AGENT",),
}
DB_PATH = "EXOCORTEX_DB_PATH"
DEFAULT_DB_PATH = "~/.exocortex/exocortex.db"


def env(name: str) -> AliasChoices:
    """A settings field's names: this project's first, then the reference's."""
    return AliasChoices(name, *REFERENCE_NAMES.get(name, ()))


def reference_database(environ: Mapping[str, str] | None = None) -> Path:
    """Where the reference keeps its database: ``EXOCORTEX_DB_PATH``, else its default."""
    environ = os.environ if environ is None else environ
    return Path(environ.get(DB_PATH) or DEFAULT_DB_PATH).expanduser()


def aliases_in_use(
    settings: BaseModel, environ: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """(reference name, this project's name) for each setting of ``settings`` whose value came
    from a reference name (set, while this project's name is not)."""
    environ = os.environ if environ is None else environ
    used = []
    for field in type(settings).model_fields.values():
        alias = field.validation_alias
        if not isinstance(alias, AliasChoices):
            continue
        names = [c for c in alias.choices if isinstance(c, str)]
        ours = next((n for n in names if n in REFERENCE_NAMES), None)
        if ours is None or ours in environ:
            continue
        used += [(theirs, ours) for theirs in REFERENCE_NAMES[ours] if theirs in environ]
    return used


def note_aliases(settings: BaseModel, log: BoundLogger) -> None:
    for theirs, ours in aliases_in_use(settings):
        log.info(
            "a reference product environment variable is in use",
            variable=theirs,
            read_as=ours,
            hint=f"rename it to {ours}",
        )
