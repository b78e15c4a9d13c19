"""The longest link the app makes, and the HAProxy buffer that takes it (deploy/serve.py).

HAProxy holds a request's whole head (its address, the Referer, the cookies) in one buffer of
``tune.bufsize`` bytes and answers a longer one with its own bare "400 Bad request" (HAProxy 2.6
writes that answer from the connection layer, where no ``errorfile`` applies). The default, 16 KiB,
refused links over about 15 KB, while the app's own caps allow about 35 KB: :func:`buffer_size`
derives the buffer from those caps.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

from core.spec.scenario_codec import MAX_TOKEN_CHARS  # the Compare page's ``cmp``

ROOT = Path(__file__).resolve().parents[1]


def _app_constant(path: str, name: str) -> int:
    """A module-level integer of the app, read from its source (importing ui/ would load Streamlit
    into the launcher)."""
    for node in ast.parse((ROOT / path).read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return int(ast.literal_eval(node.value))
    raise LookupError(f"{path} defines no {name}")


MODEL_LINK_CHARS = _app_constant("ui/link_state.py", "MAX_MODEL_CHARS")
"""The longest ``mcfg`` (a model imported from a config.json) a link carries [characters]."""
OTHER_LINK_CHARS = 12_288
"""What a link carries besides ``cmp`` and ``mcfg`` [characters]: the page's path and about 55 inputs
bound to the URL (``&key=value``, up to 46 characters each), and up to three names (model, GPU,
draft model) of up to 200 characters (core.spec.json_fields.MAX_TEXT), percent-encoded at up to 12
characters each: about 9,500 in all."""
LONGEST_LINK = MAX_TOKEN_CHARS + MODEL_LINK_CHARS + OTHER_LINK_CHARS
"""The longest address the app can put in a link [characters]."""
OTHER_HEADER_CHARS = 8192
"""A browser's request headers besides the address: cookies (HAProxy's, Streamlit's XSRF token and any
other site's on the same host), user agent, accept lines."""
MAX_REWRITE = 1024
"""HAProxy's ``tune.maxrewrite``: buffer space kept free for headers it adds (its default)."""


def buffer_size() -> int:
    """HAProxy's ``tune.bufsize`` [bytes]: a request head holds the longest link twice (as its address,
    and in the Referer each request of that page sends: both when one page of the app opens another),
    the other headers and HAProxy's rewrite space; rounded up to 4 KiB."""
    return math.ceil((2 * LONGEST_LINK + OTHER_HEADER_CHARS + MAX_REWRITE) / 4096) * 4096
