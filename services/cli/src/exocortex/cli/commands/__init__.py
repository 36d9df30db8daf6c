"""The ``exo`` subcommands, one module per area."""
