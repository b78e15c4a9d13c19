"""The API server delivering streamed tokens to the clients, in its own process beside the engine.

vLLM V1, SGLang and TensorRT-LLM's server detokenize and stream in a front-end process: it does not
slow the engine's steps, it delays what the client sees. Tokens leave it one after another, f seconds
each (Efficiency.frontend_per_token_s), in the order the engine produced them; a step of n streamed
tokens that ends at engine time t reaches the clients at

    F = max(t, F_previous) + n x f       (when the step's last token has left)   [s]

and its i-th token at F - (n - i) f: on average F - (n - 1) / 2 x f (D, what the simulator records
for every token of the step). ITL, TTFT and a request's end are what the client observes
(D); the engine's KV, admissions and steps run on engine time. A closed loop's next request is sent
when the client has the last token. When the front end keeps up (n x f below the step) each token is
late by at most n x f; when it does not, a backlog builds and the clients see one token per f x
(tokens in flight): the old rule "step >= running x f" for closed loops and bursts, an unbounded
backlog for an open loop beyond 1 / f tokens per second.
"""

from __future__ import annotations

import numpy as np


class FrontEnd:
    """The front end's clock: when the clients have each step's tokens (module docstring)."""

    def __init__(self, per_token_s: float) -> None:
        self.per_token = per_token_s
        self.free = 0.0
        """When the front end has streamed every token handed to it so far [s]."""
        self.last = 0.0
        """When the clients had the last delivered step's tokens, on average over them [s]."""

    def step(self, end: float, tokens: int) -> float:
        """When the clients have the ``tokens`` tokens of a step that ended at ``end``, on average [s]
        (``end`` for none): the i-th of n leaves at start + i f, start = max(end, free), so on average
        at start + (n + 1) / 2 x f."""
        if not tokens:
            return end
        start = max(end, self.free)
        self.free = start + tokens * self.per_token
        self.last = start + (tokens + 1) / 2 * self.per_token
        return self.last

    def run(self, ends: np.ndarray, tokens: int) -> np.ndarray:
        """:meth:`step` of a run of steps of ``tokens`` tokens each, ending at ``ends`` [s]: the k-th's
        tokens are all streamed by F_k = (k + 1) a + max(free, max_{j <= k} (t_j - j a)), a = tokens x f,
        and reach the clients at F_k - (tokens - 1) / 2 x f on average."""
        a = tokens * self.per_token
        k = np.arange(len(ends), dtype=float)
        streamed = (k + 1) * a + np.maximum(self.free, np.maximum.accumulate(ends - k * a))
        self.free = float(streamed[-1])
        delivered = streamed - (tokens - 1) / 2 * self.per_token
        self.last = float(delivered[-1])
        return delivered
