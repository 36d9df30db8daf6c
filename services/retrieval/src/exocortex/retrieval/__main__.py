"""`python -m exocortex.retrieval`: build the settings once, then run until signalled."""

import os

# Set before numpy loads OpenBLAS, which reads it once. Search multiplies small matrices (a few
# dozen vectors, as in arrival-neighbour coherence): one thread does that in about 50 µs, while
# OpenBLAS's default of a thread per core spent 0.4-3 ms waking and synchronising them on a
# busy machine, and their spinning took the cores the searches beside it needed. Heavier
# numeric work (the query encoder, the vector engine) has threads of its own.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from exocortex.core.process import run_service
from exocortex.retrieval.app import run
from exocortex.retrieval.settings import RetrievalSettings

if __name__ == "__main__":
    run_service("retrieval", RetrievalSettings(), run)
