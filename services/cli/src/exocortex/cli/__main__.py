"""``python -m exocortex.cli``: the same as ``exo`` (how ``exo up --detach`` starts itself)."""

from exocortex.cli.main import app

app(prog_name="exo")
