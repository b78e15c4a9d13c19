"""The migration scripts, oldest first by revision chain."""
