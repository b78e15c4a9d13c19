"""Plan's search names the best deployment by the objective the user picks (issue 31, item 4): the
cheapest, or the most output tokens per joule, as `python -m core search --objective` does; the
front's table lists each point's tokens per joule."""

from __future__ import annotations

from core.messages import message
from core.planning.pareto import best, search_to_dict
from core.planning.search import MODES, search
from tests.test_search import CHAT


def _plan_search(objective: str | None):
    from tests.app_helpers import open_app

    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    if objective is not None:
        at.session_state["search_objective"] = objective
    at.toggle(key="search_on").set_value(True).run()
    assert not at.exception
    return at


def test_the_plan_search_names_the_best_by_tokens_per_joule_when_asked(deploy, catalog):
    found = search(catalog, deploy(gpu="a10", max_model_len=8192), CHAT)  # the page's defaults
    by_cost, by_energy = best(found, "cost"), best(found, "tokens-per-joule")
    data = search_to_dict(found, MODES, "tokens-per-joule")
    point = data["best"]
    assert point is not None and by_energy is not None
    at = _plan_search("tokens-per-joule")
    lines = [s.value for s in at.success if s.value.startswith("Best by output tokens per joule: ")]
    assert len(lines) == 1
    assert f"{point['tokens_per_joule']:,.3g} tokens/J" in lines[0] and f"TPOT {point['tpot_ms']:,.1f} ms" in lines[0]
    # the cost objective's line is the other one; each names its own point's TPOT
    cheapest = search_to_dict(found, MODES, "cost")["best"]
    plain = _plan_search(None)
    assert any(s.value.startswith("Best: ") and f"TPOT {cheapest['tpot_ms']:,.1f} ms" in s.value for s in plain.success)
    assert not any(s.value.startswith("Best by output tokens per joule") for s in plain.success)
    if by_cost != by_energy:  # where the two objectives differ, the lines name different points
        assert point["tpot_ms"] != cheapest["tpot_ms"] or point["num_gpus"] != cheapest["num_gpus"]


def test_the_front_table_lists_tokens_per_joule(deploy, catalog):
    at = _plan_search(None)
    column = message("search.tokens_per_joule", "en")
    table = next(d.value for d in at.dataframe if column in d.value.columns)
    found = search_to_dict(search(catalog, deploy(gpu="a10", max_model_len=8192), CHAT), MODES)
    expected = ["—" if p["tokens_per_joule"] is None else f"{p['tokens_per_joule']:,.3g}" for p in found["pareto"]]
    assert list(table[column]) == expected
