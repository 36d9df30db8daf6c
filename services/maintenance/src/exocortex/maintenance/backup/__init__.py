"""Backups: the export encrypted into one file (AES-256-GCM, scrypt key), written on request or
on a schedule into the data folder, verified chunk by chunk; and the Obsidian vault export."""
