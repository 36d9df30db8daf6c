"""Cron schedules of the jobs, and the start-up pass."""
