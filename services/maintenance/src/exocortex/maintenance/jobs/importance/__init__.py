"""Importance: boost what is used, decay what is not, a graph-aware boost, optional
recalibration; pinned memories untouched, and no creep."""
