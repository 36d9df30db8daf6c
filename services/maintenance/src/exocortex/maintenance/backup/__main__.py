"""Check or decrypt a backup file anywhere, without a running stack:

    python -m exocortex.maintenance.backup verify FILE
    python -m exocortex.maintenance.backup decrypt FILE OUT.jsonl

The passphrase is read from EXO_BACKUP_PASSPHRASE, else asked for. `verify` exits 1 when the
file fails (wrong passphrase, damage, truncation, a count or checksum unlike the manifest).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path

from exocortex.core.backup_format import crypto
from exocortex.maintenance.backup.service import verify_file


def _passphrase() -> str:
    return os.environ.get("EXO_BACKUP_PASSPHRASE") or getpass.getpass("Backup passphrase: ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exocortex.maintenance.backup")
    sub = parser.add_subparsers(dest="command", required=True)
    verify = sub.add_parser("verify", help="decrypt and check every chunk, count and checksum")
    verify.add_argument("file", type=Path)
    decrypt = sub.add_parser("decrypt", help="write the JSON Lines document inside the backup")
    decrypt.add_argument("file", type=Path)
    decrypt.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "verify":
        report = verify_file(args.file, _passphrase())
        print(
            json.dumps(
                {
                    "name": report.name,
                    "ok": report.ok,
                    "format_version": report.format_version,
                    "exported_at": report.exported_at.isoformat() if report.exported_at else None,
                    "counts": report.counts,
                    "problems": report.problems,
                },
                indent=2,
            )
        )
        return 0 if report.ok else 1
    partial = args.out.with_name(args.out.name + ".partial")
    try:
        with args.file.open("rb") as source, partial.open("wb") as out:
            for chunk in crypto.decrypt_chunks(source, _passphrase()):
                out.write(chunk)
    except crypto.BackupFormatError as err:
        partial.unlink(missing_ok=True)
        print(f"error: {err}", file=sys.stderr)
        return 1
    partial.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
