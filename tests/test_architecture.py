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
PACKAGES = ("spec", "memory", "timing", "levers", "estimate", "serving", "planning", "validation", "teaching", "cli")
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
