"""The maintenance jobs: a small framework (``base``, ``runner``, ``repository``) and one
subpackage per capability, each with its own service (the logic) and repository (its SQL)."""
