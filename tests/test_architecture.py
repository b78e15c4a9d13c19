"""The layout of core/: packages by concern, an import graph without cycles, public modules named in
each package's ``__init__``, no module over 300 lines, and every reference to core in the text true."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
MAX_LINES = 300
PACKAGES = (
    "spec",
    "memory",
    "timing",
    "levers",
    "estimate",
    "serving",
    "planning",
    "validation",
    "teaching",
    "report",
    "benchcheck",
    "energy",
    "cli",
    "deploy",
    "classroom",
)
SOURCES = [
    *sorted(p for d in ("core", "ui", "pages", "tests", "bench") for p in (ROOT / d).rglob("*.py")),
    ROOT / "app.py",
]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "data").rglob("*.md"))]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> set[str]:
    """Modules ``path`` imports when it runs (``if TYPE_CHECKING:`` blocks are annotations only)."""
    tree = ast.parse(path.read_text())
    skipped = {
        id(node)
        for guard in ast.walk(tree)
        if isinstance(guard, ast.If) and "TYPE_CHECKING" in ast.unparse(guard.test)
        for node in ast.walk(guard)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


CORE_MODULES = {module_name(p): p for p in CORE.rglob("*.py")}


def core_graph() -> dict[str, set[str]]:
    """Each core module and the core modules it imports at run time."""
    return {name: {m for m in runtime_imports(p) if m in CORE_MODULES} - {name} for name, p in CORE_MODULES.items()}


def test_core_is_split_into_the_packages_of_the_model():
    found = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert found == set(PACKAGES)
    loose = {p.name for p in CORE.glob("*.py")} - {"__init__.py", "__main__.py", "messages.py"}
    assert loose == set(), "modules belong in a package"


def test_core_import_graph_has_no_cycles():
    graph = core_graph()
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt] if nxt in stack else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def imports(path: Path, module: str) -> set[str]:
    """Every module ``path`` (the module ``module``) names in an import statement: at run time, inside
    functions and under ``if TYPE_CHECKING:`` alike, relative imports resolved."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: len(module.split(".")) - node.level + (path.name == "__init__.py")]
                base = ".".join([*package, *([base] if base else [])])
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return found


OUTSIDE_CORE = ("ui", "pages", "app", "streamlit", "plotly")
"""What core never imports: the web layer (our own and its libraries)."""
BELOW_LEVERS = ("core.memory", "core.timing")
ABOVE_MEMORY_AND_TIMING = tuple(
    f"core.{p}" for p in ("levers", "estimate", "serving", "planning", "validation", "teaching", "cli")
)
"""Levers sit above memory and timing: they transform what memory and timing receive (the deployment
hands them the models of the levers that are on, :attr:`core.spec.deployment.Deployment.lever_models`),
so no import runs from memory or timing up to a lever or to anything built on them."""


def within(name: str, packages) -> bool:
    """Whether module ``name`` is one of ``packages`` or inside one."""
    return any(name == p or name.startswith(f"{p}.") for p in packages)


def layer_violations(root: Path) -> list[str]:
    """Imports under ``root``/core that run against the layers: core importing the web layer, or
    memory and timing importing a lever or a package above them."""
    wrong = []
    for path in sorted((root / "core").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for name in sorted(imports(path, module)):
            if within(name, OUTSIDE_CORE) or (within(module, BELOW_LEVERS) and within(name, ABOVE_MEMORY_AND_TIMING)):
                wrong.append(f"{module} imports {name}")
    return wrong


def test_memory_and_timing_never_import_levers_and_core_never_imports_the_web_layer():
    assert layer_violations(ROOT) == []


def test_the_layer_check_finds_each_kind_of_wrong_import(tmp_path):
    """The check above on a small tree with one import of each kind that runs against the layers
    (at run time, inside a function, under TYPE_CHECKING, relative) and two that are allowed."""
    sources = {
        "core/memory/budget.py": "from core.levers.registry import levers_on\n",
        "core/memory/kv.py": "def f():\n    import core.levers.base\n",
        "core/timing/phases.py": "if TYPE_CHECKING:\n    from core.levers import base\n",
        "core/timing/work.py": "from ..estimate import result\n",
        "core/spec/model.py": "import streamlit as st\n",
        "core/estimate/report.py": "from ui.i18n import t\n",
        "core/levers/offload.py": "from core.timing.host_link import host_read_seconds\n",  # allowed: levers sit above
        "core/timing/roofline.py": "from core.memory.budget import gpu_memory\n",  # allowed
    }
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert layer_violations(tmp_path) == [
        "core.estimate.report imports ui.i18n",
        "core.estimate.report imports ui.i18n.t",
        "core.memory.budget imports core.levers.registry",
        "core.memory.budget imports core.levers.registry.levers_on",
        "core.memory.kv imports core.levers.base",
        "core.spec.model imports streamlit",
        "core.timing.phases imports core.levers",
        "core.timing.phases imports core.levers.base",
        "core.timing.work imports core.estimate",
        "core.timing.work imports core.estimate.result",
    ]


def test_core_never_imports_streamlit_or_plotly():
    for path in CORE.rglob("*.py"):
        for name in runtime_imports(path):
            assert name.split(".")[0] not in ("streamlit", "plotly"), (path, name)
        text = path.read_text()
        assert "import streamlit" not in text and "import plotly" not in text, path


@pytest.mark.parametrize("package", PACKAGES)
def test_package_init_names_its_public_modules(package):
    """Code outside a package imports only the modules its ``__init__`` lists in ``__all__``."""
    init = CORE / package / "__init__.py"
    tree = ast.parse(init.read_text())
    assert ast.get_docstring(tree), f"core/{package}/__init__.py says what the package owns"
    listed = next(
        (ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__"),
        None,
    )
    assert listed, f"core/{package}/__init__.py lists its public modules in __all__"
    modules = {p.stem for p in (CORE / package).glob("*.py")} - {"__init__"}
    assert set(listed) <= modules | {"main"}
    prefix = f"core.{package}."
    for path in SOURCES:
        if CORE / package in path.parents or path.parent.name == "tests":  # tests may test a private module
            continue
        for name in runtime_imports(path):
            if name.startswith(prefix) and name[len(prefix) :].split(".")[0] in modules:
                assert name[len(prefix) :].split(".")[0] in listed, f"{path.relative_to(ROOT)} imports {name}"


def test_no_module_over_300_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for d in ("core", "ui", "pages")
        for p in (ROOT / d).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


DOTTED = re.compile(r"(?<![.\w/])core(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
PATH = re.compile(r"(?<![.\w/])core/[A-Za-z0-9_/]+\.py\b")


def _resolves(reference: str) -> bool:
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            target = importlib.import_module(name)
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(target, attr):
                return False
            target = getattr(target, attr)
        return True
    return False


def test_every_reference_to_core_in_code_and_docs_exists():
    """Dotted names (``core.memory.budget.gpu_memory``) and paths (``core/memory/kv.py``) in
    docstrings, comments and the Markdown documents name things that exist."""
    sys.path.insert(0, str(ROOT))
    wrong = set()
    for path in [*SOURCES, *DOCS]:
        text = path.read_text()
        for ref in set(DOTTED.findall(text)):
            if not _resolves(ref.rstrip(".")):
                wrong.add(f"{path.relative_to(ROOT)}: {ref}")
        for ref in set(PATH.findall(text)):
            if not (ROOT / ref).exists():
                wrong.add(f"{path.relative_to(ROOT)}: {ref}")
    assert sorted(wrong) == []


DP_NAMES = {"dp", "data_parallel"}
"""Names that mean a data-parallel degree; a test of one beside ``moe`` decides data parallelism by
whether the model has routed experts."""


def _scopes_testing_dp_by_experts(node: ast.AST, scope: str = ""):
    """The scope (``Class.function``) of each test under ``node`` of a data-parallel degree together
    with a model's routed experts (``.moe``)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        scope = f"{scope}.{node.name}" if scope else node.name
    tested = None
    if isinstance(node, (ast.BoolOp, ast.IfExp, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        tested = node
    elif isinstance(node, (ast.If, ast.While, ast.Assert)):
        tested = node.test
    if tested is not None:
        names = {n.id for n in ast.walk(tested) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tested) if isinstance(n, ast.Attribute)}
        if "moe" in names and names & DP_NAMES:
            yield scope
    for child in ast.iter_child_nodes(node):
        yield from _scopes_testing_dp_by_experts(child, scope)


def dp_by_experts(root: Path) -> set[tuple[str, str]]:
    """(file, function) of every condition, boolean expression or comprehension in core, ui and pages
    that decides data parallelism by whether the model has routed experts."""
    return {
        (str(path.relative_to(root)), scope)
        for path in sorted(p for d in ("core", "ui", "pages") for p in (root / d).rglob("*.py"))
        for scope in _scopes_testing_dp_by_experts(ast.parse(path.read_text()))
    }


NOT_A_REFUSAL = {("core/memory/weights.py", "expert_share_per_gpu")}
"""Formulas that read dp and the experts without deciding whether the layout is allowed: the share of
the routed experts a GPU holds is 1 / tp where no whole experts are placed (dp 1, or none routed)."""


def test_the_dense_data_parallel_refusal_is_written_once():
    """Dense models take no data-parallel attention (no routed experts to split): the rule is
    :meth:`core.spec.engine.Parallelism.data_parallel_error` and nothing else decides it."""
    assert dp_by_experts(ROOT) - NOT_A_REFUSAL == {("core/spec/engine.py", "Parallelism.data_parallel_error")}


def test_the_written_once_check_finds_a_copy_of_the_rule(tmp_path):
    (tmp_path / "core" / "planning").mkdir(parents=True)
    (tmp_path / "ui").mkdir()
    (tmp_path / "core" / "planning" / "shapes.py").write_text(
        "def layouts(base, space):\n"
        "    return [d for d in space.data_parallel if d == 1 or base.model.moe is not None]\n"
    )
    (tmp_path / "ui" / "sidebar.py").write_text(
        "def store(model, dp):\n    if dp > 1 and model.moe is None:\n        raise ValueError('dense')\n"
    )
    assert dp_by_experts(tmp_path) == {("core/planning/shapes.py", "layouts"), ("ui/sidebar.py", "store")}


STAND_IN = "stand-in refusal of data-parallel attention"


def test_every_caller_refuses_data_parallel_attention_through_the_one_rule(monkeypatch, catalog, cli):
    """With the rule replaced by a stand-in that refuses every dp > 1 (MoE models included), every
    place that builds a layout refuses Qwen3-30B-A3B with dp 2, which the real rule accepts: the
    weights per GPU, a scenario file or link, the CLI, the Plan's search and the sidebar."""
    from core.memory.weights import weight_bytes_per_gpu
    from core.planning.shapes import SearchSpace, layouts
    from core.spec.engine import Parallelism
    from core.spec.scenario_codec import decode
    from tests.app_helpers import open_app, shown

    moe = catalog.model("qwen3-30b-a3b")
    base, _ = decode({"model": moe.id, "gpu": "h100-sxm"}, catalog)
    scenario = {"model": moe.id, "gpu": "h100-sxm", "dp": 2}
    estimate_dp = ("estimate", "--model", moe.id, "--gpu", "h100-sxm", "--dp", "2")
    app_dp = {"model": moe.name, "gpu": "NVIDIA H100 SXM5 80GB", "dp": "2"}

    def refusals() -> dict[str, bool]:
        try:
            weight_bytes_per_gpu(moe, base.weights, Parallelism(tp=1, dp=2))
            weights = False
        except ValueError as err:
            weights = STAND_IN in str(err)
        try:
            decode(scenario, catalog)
            codec = False
        except ValueError as err:
            codec = STAND_IN in str(err)
        code, _, err = cli(*estimate_dp)
        return {
            "weights": weights,
            "codec": codec,
            "cli": code == 2 and STAND_IN in err,
            "search": all(dp == 1 for _, _, dp in layouts(base, SearchSpace())),
            "sidebar": any(STAND_IN in shown(e) for e in open_app(**app_dp).error),
        }

    assert not any(refusals().values())  # the real rule lets a MoE model take dp 2
    monkeypatch.setattr(Parallelism, "data_parallel_error", lambda self, model: STAND_IN if self.dp > 1 else None)
    refused = refusals()
    assert all(refused.values()), refused
