"""`SessionStore` adapters: in memory, SQLite, PostgreSQL and Redis."""
