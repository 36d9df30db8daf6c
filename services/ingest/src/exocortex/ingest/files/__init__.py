"""Documents turned into memories: markdown files by section, session transcripts as digests."""
