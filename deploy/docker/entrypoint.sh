#!/bin/sh
# Starts the Exocortex part this image was built for (EXO_PACKAGE).
#   (no arguments)  run the part
#   migrate [...]   apply database migrations (python -m exocortex.core.db.migrate upgrade)
#   anything else   run it as a command, e.g. `sh` or `python -m exocortex.core.db.migrate current`
set -eu

if [ "$#" -gt 0 ]; then
  if [ "$1" = "migrate" ]; then
    shift
    exec python -m exocortex.core.db.migrate upgrade "$@"
  fi
  exec "$@"
fi

case "${EXO_PACKAGE:-}" in
  embedding|ingest|retrieval|enrichment|maintenance|gateway)
    exec python -m "exocortex.${EXO_PACKAGE}" ;;
  mcp-adapter)
    exec python -m exocortex.mcp --transport http ;;
  *)
    echo "exo-entrypoint: unknown EXO_PACKAGE '${EXO_PACKAGE:-}'" >&2
    exit 64 ;;
esac
