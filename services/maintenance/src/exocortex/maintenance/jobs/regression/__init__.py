"""Retrieval regression: golden queries (setting `retrieval_regression.queries`) compared with
their baselines by overlap@k and rank shift, with a run history."""
