"""Traffic for the simulator: request lengths and arrival processes, seeded and validated.

Lengths: fixed, uniform (mean +- spread x mean) or log-normal (mean, sigma of the log), or read
from a CSV of (prompt, answer) token counts. Arrivals: Poisson at a rate, or gamma inter-arrival
times with a coefficient of variation above 1 for bursty traffic (CV 1 is Poisson).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from dataclasses import dataclass

import numpy as np

LENGTH_DISTRIBUTIONS = ("fixed", "uniform", "lognormal")
SHAREGPT_SIGMA = {"input": 1.2, "output": 0.92}
"""Log-normal spread (sigma of ln length) of ShareGPT as vLLM's benchmark samples it: sigma^2 =
2 ln(mean / median) with input mean 221 / median 108 and output 199 / 130 tokens (Llama-3
tokenizer, vLLM's filter: prompt <= 1024, prompt + output <= 2048), computed from the first 17,671
records of ShareGPT_V3_unfiltered_cleaned_split.json; the input mean agrees with the 229.7 tokens a
full 1000-prompt run printed (vllm-project/vllm#18566). Output P90 487 (the log-normal gives 423)."""
TRAFFIC_MODES = ("rate", "concurrency", "users")
MAX_CSV_BYTES = 5_000_000
MAX_CSV_ROWS = 200_000
MAX_TOKENS = 10_000_000


@dataclass(frozen=True, kw_only=True)
class Lengths:
    """How prompt or answer lengths are drawn [tokens]."""

    mean: int
    distribution: str = "fixed"
    spread: float = 0.5
    """uniform: half-width as a share of the mean; lognormal: sigma of log(length)."""

    def __post_init__(self) -> None:
        if self.distribution not in LENGTH_DISTRIBUTIONS:
            raise ValueError(
                f"length distribution must be one of {', '.join(LENGTH_DISTRIBUTIONS)}, got {self.distribution!r}"
            )
        if isinstance(self.mean, bool) or not isinstance(self.mean, int) or not 1 <= self.mean <= MAX_TOKENS:
            raise ValueError(f"mean length must be an integer from 1 to {MAX_TOKENS}, got {self.mean!r}")
        if not 0 <= self.spread <= 3:
            raise ValueError(f"spread must be between 0 and 3, got {self.spread!r}")

    @property
    def longest(self) -> int | None:
        """The longest length drawn [tokens]: the mean when fixed, mean x (1 + spread) rounded up when
        uniform; None for the log-normal, whose tail has no end."""
        if self.distribution == "fixed":
            return self.mean
        if self.distribution == "uniform":
            return math.ceil(self.mean * (1 + self.spread))
        return None

    def sample(self, count: int, rng: np.random.Generator, longest: int) -> np.ndarray:
        """``count`` lengths, each between 1 and ``longest`` [tokens]."""
        if self.distribution == "fixed":
            values = np.full(count, float(self.mean))
        elif self.distribution == "uniform":
            half = self.spread * self.mean
            values = rng.uniform(self.mean - half, self.mean + half, count)
        else:  # log-normal with the given mean: mu = ln(mean) - sigma^2 / 2
            values = rng.lognormal(np.log(self.mean) - self.spread**2 / 2, self.spread, count)
        return np.clip(np.rint(values), 1, longest).astype(np.int64)


def longest_request(prompts: Lengths | np.ndarray, answers: Lengths | np.ndarray) -> int | None:
    """The longest prompt + the longest answer a simulation can draw [tokens] (the lengths of a CSV,
    or :attr:`Lengths.longest`); None when a log-normal leaves it unbounded."""
    longest = [int(np.max(x)) if isinstance(x, np.ndarray) else x.longest for x in (prompts, answers)]
    return None if None in longest else sum(longest)


@dataclass(frozen=True, kw_only=True)
class Traffic:
    """Open loop (``rate``), closed loop with ``concurrency`` clients, or ``users`` who think."""

    mode: str = "rate"
    rate_per_s: float = 1.0
    burstiness: float = 1.0
    """Coefficient of variation of inter-arrival times: 1 = Poisson, above 1 = bursty (gamma)."""
    concurrency: int = 8
    users: int = 50
    think_time_s: float = 30.0

    def __post_init__(self) -> None:
        if self.mode not in TRAFFIC_MODES:
            raise ValueError(f"traffic mode must be one of {', '.join(TRAFFIC_MODES)}, got {self.mode!r}")
        if not 0 < self.rate_per_s <= 1e6:
            raise ValueError(f"request rate must be above 0 and at most 1e6 per s, got {self.rate_per_s!r}")
        if not 0.1 <= self.burstiness <= 10:
            raise ValueError(f"burstiness must be between 0.1 and 10, got {self.burstiness!r}")
        for name in ("concurrency", "users"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
                raise ValueError(f"{name} must be an integer from 1 to 100000, got {value!r}")
        if not 0 <= self.think_time_s <= 86_400:
            raise ValueError(f"think time must be between 0 and 86400 s, got {self.think_time_s!r}")

    def rank_share(self, ranks: int) -> Traffic:
        """What one of ``ranks`` data-parallel attention ranks receives: 1/ranks of the rate, the clients
        or the users (rounded, at least one)."""
        return dataclasses.replace(
            self,
            rate_per_s=self.rate_per_s / ranks,
            concurrency=max(1, round(self.concurrency / ranks)),
            users=max(1, round(self.users / ranks)),
        )


def arrival_times(rate: float, count: int, rng: np.random.Generator, burstiness: float = 1.0) -> np.ndarray:
    """Arrival instants [s] of ``count`` requests: gamma inter-arrivals with mean 1/rate and CV
    ``burstiness`` (shape 1/CV^2; CV 1 is the exponential, i.e. Poisson arrivals)."""
    shape = 1 / burstiness**2
    gaps = rng.gamma(shape, 1 / (rate * shape), count)
    return np.cumsum(gaps) - gaps[0]


def read_lengths_csv(data: str | bytes) -> tuple[np.ndarray, np.ndarray]:
    """(prompt, answer) lengths from a CSV with those two columns (a header row is optional)."""
    if isinstance(data, bytes):
        if len(data) > MAX_CSV_BYTES:
            raise ValueError(f"CSV is larger than {MAX_CSV_BYTES} bytes")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise ValueError(f"CSV is not UTF-8 text (byte {err.start})") from None
    prompts, answers = [], []
    rows = csv.reader(io.StringIO(data))
    try:
        _read_rows(rows, prompts, answers)
    except csv.Error as err:  # a field over the csv module's size limit: a ValueError like every other CSV error
        raise ValueError(f"CSV line {rows.line_num}: not a CSV of two columns ({err})") from None
    if not prompts:
        raise ValueError("CSV has no (prompt, answer) rows")
    return np.array(prompts, dtype=np.int64), np.array(answers, dtype=np.int64)


def _read_rows(rows, prompts: list[int], answers: list[int]) -> None:
    for number, row in enumerate(rows, start=1):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) < 2:
            raise ValueError(f"CSV line {number}: expected two columns (prompt, answer), got {len(row)}")
        try:
            prompt, answer = int(row[0]), int(row[1])
        except ValueError:
            if number == 1 and not prompts:
                continue  # header
            shown = [cell if len(cell) <= 20 else cell[:20] + "..." for cell in row[:2]]  # the message stays one line
            raise ValueError(f"CSV line {number}: lengths must be whole numbers, got {shown!r}") from None
        if not (1 <= prompt <= MAX_TOKENS and 1 <= answer <= MAX_TOKENS):
            raise ValueError(f"CSV line {number}: lengths must be between 1 and {MAX_TOKENS} tokens")
        prompts.append(prompt)
        answers.append(answer)
        if len(prompts) > MAX_CSV_ROWS:
            raise ValueError(f"CSV has more than {MAX_CSV_ROWS} rows")


SGLANG_RANDOM_SPREAD = 1.0
"""Half-width over mean of the lengths SGLang's ``bench_serving --dataset-name random`` draws at its
default ``--random-range-ratio`` 0: each length uniform over [max(1, nominal x ratio), nominal]
(``sample_random_requests``), so over [1, nominal], mean about nominal / 2 and half-width = mean. The
stated totals agree: 39,668 prompt tokens over 80 requests at a nominal 1,000 (SGLang cookbook). vLLM's
``bench serve`` draws [nominal x (1 - ratio), nominal x (1 + ratio)], fixed at its default ratio 0."""


def dataset_lengths(shape: str, prompt_mean: int, answer_mean: int) -> tuple[Lengths, Lengths]:
    """Prompt and answer lengths of a benchmark's data around the stated means: 'fixed' (random data at
    set lengths), 'uniform' (SGLang's random data at its default range ratio, SGLANG_RANDOM_SPREAD) or
    'sharegpt' (log-normal with ShareGPT's spread, SHAREGPT_SIGMA)."""
    if shape == "sharegpt":
        return (
            Lengths(mean=prompt_mean, distribution="lognormal", spread=SHAREGPT_SIGMA["input"]),
            Lengths(mean=answer_mean, distribution="lognormal", spread=SHAREGPT_SIGMA["output"]),
        )
    if shape == "uniform":
        return (
            Lengths(mean=prompt_mean, distribution="uniform", spread=SGLANG_RANDOM_SPREAD),
            Lengths(mean=answer_mean, distribution="uniform", spread=SGLANG_RANDOM_SPREAD),
        )
    if shape not in ("", "fixed"):
        raise ValueError(f"length shape must be fixed, uniform or sharegpt, got {shape!r}")
    return Lengths(mean=prompt_mean), Lengths(mean=answer_mean)
