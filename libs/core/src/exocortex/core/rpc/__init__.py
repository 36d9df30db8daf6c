"""gRPC plumbing shared by every service: server set-up, health, metrics, errors, clients."""
