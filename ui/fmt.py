"""Display formatting: SI values from core to short strings with units (same in both languages)."""

from __future__ import annotations

from core.messages import count, duration, gib, rate  # noqa: F401 (the one format, shared with core's texts)
