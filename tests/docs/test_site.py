"""The docs site builds offline with every link checked: `mkdocs build --strict` (mkdocs.yml's
`validation:` makes a broken link, a missing anchor or a page left out of the nav a warning,
and strict mode an error). Skipped, with the reason, where MkDocs and its Material theme are
not installed (`pip install -e '.[docs]'` or the dev extra install them; CI has them)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISSING = [m for m in ("mkdocs", "material") if importlib.util.find_spec(m) is None]

pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"the docs site needs {' and '.join(MISSING)}: pip install -e '.[docs]'"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # no proxy that works: a build that reached for the network would fail or hang, not pass
    env.update(
        dict.fromkeys(
            ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"), "http://127.0.0.1:9"
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    nav = re.findall(r":\s*(\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)
    assert len(nav) >= 20
    for page in nav:
        assert (site / page.replace(".md", ".html")).is_file(), page


def test_the_generated_reference_is_on_the_site(site: Path) -> None:
    from lisboa_rules.core import codes

    html = (site / "reference" / "codes.html").read_text(encoding="utf-8")
    for name in codes.CODES:
        assert f'id="{name}"' in html, name
    steps = (site / "reference" / "steps.html").read_text(encoding="utf-8")
    assert 'id="for-each"' in steps and 'id="choose"' in steps


def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    """No page asks a browser for a font, a script or a style sheet from another host."""
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:link|script|img)[^>]+(?:href|src)="(https?:)?//[^"]*"', text)
        assert not remote, (page, remote)
    assert (site / "player-aid.png").is_file()
