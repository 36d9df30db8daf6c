"""REST routers: each converts HTTP ↔ gRPC and nothing else."""
