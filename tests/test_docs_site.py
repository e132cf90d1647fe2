"""The spec site covers the whole specification and cannot drift from the code.

- every ``spec`` module is pulled into some page by a snippet, and every snippet section a page
  names exists in its module (a start and an end marker);
- every page is in the navigation, and every navigation entry is a page;
- the options page is generated from the option registry, with every key and default;
- the typed packages ship their ``py.typed`` marker.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPET = re.compile(r'--8<-- "([^":]+)(?::([\w-]+))?"')


def _pages() -> dict[str, str]:
    return {p.relative_to(DOCS).as_posix(): p.read_text() for p in DOCS.rglob("*.md")}


def _snippets() -> list[tuple[str, str, str | None]]:
    return [(page, m.group(1), m.group(2)) for page, text in _pages().items() for m in SNIPPET.finditer(text)]


def test_every_spec_module_is_on_a_page() -> None:
    pulled = {path for _, path, _ in _snippets()}
    modules = {f"spec/{p.name}" for p in (ROOT / "spec").glob("*.py") if p.name != "__init__.py"}
    missing = sorted(modules - pulled)
    assert not missing, f"no page of docs/ pulls in code from {missing}; add a snippet section and a page"


def test_every_snippet_section_exists() -> None:
    for page, path, section in _snippets():
        source = ROOT / path
        assert source.exists(), f"docs/{page} pulls in {path}, which does not exist"
        if section is None:
            continue
        text = source.read_text()
        for edge in ("start", "end"):
            assert f"--8<-- [{edge}:{section}]" in text, f"docs/{page}: {path} has no [{edge}:{section}] marker"


def _nav_pages(entries: Any) -> list[str]:
    out: list[str] = []
    for entry in entries:
        if isinstance(entry, str):
            out.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                out += [value] if isinstance(value, str) else _nav_pages(value)
    return out


def test_nav_lists_every_page() -> None:
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    pages = set(_pages())
    assert sorted(pages - set(nav)) == [], "pages missing from the nav of mkdocs.yml"
    assert sorted(set(nav) - pages) == [], "nav entries without a page"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_options_page_is_generated_from_the_registry() -> None:
    from spec.config.registry import WRITER_OPTIONS as REGISTRY

    spec = importlib.util.spec_from_file_location("hudi_spec_docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)

    assert hooks.OPTIONS_MARKER in (DOCS / "guide" / "options.md").read_text()
    table = hooks.options_table()
    rows = table.splitlines()[2:]
    assert len(rows) == len(REGISTRY)
    for opt, row in zip(REGISTRY, rows, strict=True):
        assert row.startswith(f"| `{opt.key}`"), row
        if opt.default:
            assert f"`{opt.default}`" in row, row
    rendered = hooks.on_page_markdown(f"before\n\n{hooks.OPTIONS_MARKER}\n\nafter", None, None, None)
    assert hooks.OPTIONS_MARKER not in rendered and table in rendered


@pytest.mark.parametrize("package", ["spec", "reference", "conformance"])
def test_packages_ship_py_typed(package: str) -> None:
    assert (ROOT / package / "py.typed").exists()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in package_data.get(package, []) + package_data.get("*", [])


def test_wide_code_and_tables_show_that_they_scroll() -> None:
    """The site's stylesheet keeps the scrollbars of code blocks and tables visible and draws a shadow on an
    edge past which they continue (checked by eye at 1280 px in headless Chromium; here: it is wired in)."""
    config = (ROOT / "mkdocs.yml").read_text()
    sheets = re.findall(r"^extra_css:\n((?:  - .+\n)+)", config, re.M)
    assert sheets, "mkdocs.yml has no extra_css"
    paths = [line.strip()[2:] for line in sheets[0].splitlines()]
    css = "".join((DOCS / p).read_text() for p in paths)
    for selector in (".md-typeset pre > code", ".md-typeset__scrollwrap"):
        rules = "".join(m.group(1) for m in re.finditer(rf"{re.escape(selector)}[^{{]*{{([^}}]*)}}", css))
        assert "scrollbar-color" in rules or "scrollbar-width" in rules, selector
        assert "no-repeat local" in rules and "no-repeat scroll" in rules, f"{selector}: no scroll shadow"


def test_code_blocks_fit_the_page_width() -> None:
    """A code block's long line wraps inside the column (leading spaces kept, a long name broken where it must)
    instead of running past the page's right edge: the rule is in a stylesheet the site loads."""
    config = (ROOT / "mkdocs.yml").read_text()
    sheets = re.findall(r"^extra_css:\n((?:  - .+\n)+)", config, re.M)
    css = "".join((DOCS / line.strip()[2:]).read_text() for line in sheets[0].splitlines())
    rules = "".join(m.group(1) for m in re.finditer(r"\.md-typeset pre > code\s*{([^}]*)}", css))
    assert re.search(r"white-space:\s*pre-wrap", rules) and re.search(r"overflow-wrap:\s*anywhere", rules), rules
