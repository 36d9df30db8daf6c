"""NATS JetStream: the domain event bus."""
