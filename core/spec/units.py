"""Unit constants. Everything inside ``core`` is SI (bytes, seconds, FLOP, FLOP/s, bytes/s).

Decimal and binary prefixes are named apart so that GB (1e9) and GiB (2**30), which differ by
7.4 %, are never confused. Convert only when loading catalogs and when formatting for display.
"""

GB = 1e9
TB = 1e12

KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30

TERA = 1e12  # FLOP/s per TFLOP/s (decimal, as every datasheet uses)

MS = 1e-3  # seconds per millisecond
US = 1e-6  # seconds per microsecond
