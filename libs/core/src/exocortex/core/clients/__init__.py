"""Typed clients for the gRPC services (so callers never touch stubs or status codes)."""
