"""Adaptive weight tuning from usefulness signals: bounded, logged, reversible."""
