"""Alembic's environment and the class database's migration scripts, shipped inside the package."""
