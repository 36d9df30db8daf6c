"""SQL for the tables several services share. Only this package and db/ talk to Postgres."""
