"""The package's own modules import one another without a circle (nested imports too)."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "ant"


def imports_of(path):
    """The ``ant.X`` modules a file imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ant."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("ant."))
    return found


def test_no_import_circle():
    graph = {p.stem: imports_of(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert set(graph) >= {"_ensemble", "_io", "_member", "ray", "_estimators"}

    def reaches(start, goal, seen):
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    circles = [m for m in graph if reaches(m, m, {m})]
    assert not circles, f"modules in an import circle: {circles}; graph: {graph}"
