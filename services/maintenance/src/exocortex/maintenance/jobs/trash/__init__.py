"""The trash purge job."""
