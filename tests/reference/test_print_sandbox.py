"""`pdf` prints pages made from data (issue 30): neither back end runs a script or loads
anything from the network or from files outside the page's own folder.

A hostile page tries: a script that rewrites the text and the title; a stylesheet, an image, an
@import, a font and a background from a tiny HTTP server of the test (loopback only, recording
every request, shut down at the end of the test); a stylesheet and an iframe from a file://
URL outside the page's folder whose content would show in the PDF's text. The PDF's text
(pdftotext) and the server's log show that none of it happened. Controls show each probe can
see what it looks for.
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lisboa_rules.cli import reference
from lisboa_rules.emit.reference import pageindex

ORIGINAL = "ORIGINALTEXT"
SCRIPT_MARK = "SCRIPTRAN"
OUTSIDE_MARK = "OUTSIDEFILELOADED"
INSIDE_MARK = "INSIDEFOLDERLOADED"


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'body::after { content: "NETWORKLOADED"; }'
        self.send_response(200)
        self.send_header("Content-Type", "text/css")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[tuple[str, list[str]]]:
    """A recording HTTP server on 127.0.0.1 (a free port), for this test only."""
    hits: list[str] = []
    handler = type("Handler", (_Recorder,), {"hits": hits})
    httpd = http.server.HTTPServer(("127.0.0.1", 0), handler)
    httpd.timeout = 1
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _hostile(base: str, outside: Path) -> str:
    css = outside / "style.css"
    text = outside / "secret.txt"
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{ORIGINAL}</title>
<link rel="stylesheet" href="{base}/link.css">
<link rel="stylesheet" href="{css.as_uri()}">
<link rel="stylesheet" href="inside.css">
<style>
@import url("{base}/import.css");
@font-face {{ font-family: Far; src: url("{base}/font.woff2"); }}
h1 {{ font-family: Far, serif; background: url("{base}/background.png"); }}
</style>
</head><body>
<h1 id="t">{ORIGINAL}</h1>
<script>
document.getElementById("t").textContent = "{SCRIPT_MARK}";
document.title = "{SCRIPT_MARK}";
document.body.appendChild(document.createTextNode("{SCRIPT_MARK}"));
</script>
<img src="{base}/image.png" alt="">
<iframe src="{text.as_uri()}"></iframe>
<object data="{text.as_uri()}" type="text/plain"></object>
</body></html>
"""


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "style.css").write_text(f'body::before {{ content: "{OUTSIDE_MARK}"; }}\n')
    (outside / "secret.txt").write_text(f"{OUTSIDE_MARK}\n")
    return outside


def _pdf_text(pdf: Path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    done = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True)
    return "".join(done.stdout.split())  # the marks have no spaces; lines may break them


def _printer(backend: str) -> reference.Printer:
    if backend == "weasyprint" and reference._weasyprint() is None:
        pytest.skip("WeasyPrint is not installed (pip install '.[pdf]')")
    if backend == "chromium" and reference.find_chromium() is None:
        pytest.skip("no chromium on the PATH (apt-get install chromium)")
    chosen = reference.choose_printer(backend)
    assert chosen is not None and chosen[0] == backend
    return chosen[1]


BACKENDS = ["weasyprint", pytest.param("chromium", marks=pytest.mark.browser)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hostile_page_runs_no_script_and_loads_nothing(
    backend: str, tmp_path: Path, server: tuple[str, list[str]]
) -> None:
    printer = _printer(backend)
    base, hits = server
    urllib.request.urlopen(f"{base}/control", timeout=10).read()  # the server does record
    assert hits == ["/control"]
    hits.clear()
    outside = _outside(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "inside.css").write_text(f'h1::after {{ content: "{INSIDE_MARK}"; }}\n')
    target = work / "out.pdf"
    printer(_hostile(base, outside), work, target)
    text = _pdf_text(target)
    assert ORIGINAL in text, text  # the page printed, and pdftotext reads it
    assert SCRIPT_MARK not in text, text
    assert OUTSIDE_MARK not in text, text
    assert "NETWORKLOADED" not in text, text
    assert hits == [], hits
    if backend == "weasyprint":  # the page's own folder is readable: the probe can see
        assert INSIDE_MARK in text, text


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_indexed_printing_is_sandboxed_too(
    backend: str, tmp_path: Path, server: tuple[str, list[str]]
) -> None:
    """A page with an index is laid out twice (print_indexed: WeasyPrint's render(), or a
    first Chromium print): the first pass obeys the same rules."""
    printer = _printer(backend)
    base, hits = server
    outside = _outside(tmp_path)
    html = _hostile(base, outside).replace(
        "</body>", '<ul><li>Title <span class="locs"><a class="pg" href="#t" data-ix="1">'
        "x</a></span></li></ul></body>")
    assert pageindex.anchors(html) == ["t"]
    work = tmp_path / "work"
    work.mkdir()
    target = work / "out.pdf"
    reference.print_indexed(backend, printer, html, work, target)
    text = _pdf_text(target)
    assert ORIGINAL in text and SCRIPT_MARK not in text and OUTSIDE_MARK not in text, text
    assert hits == [], hits


def test_the_policy_comes_first(tmp_path: Path) -> None:
    """The Content Security Policy is the page's first element (after the doctype), so no
    script or fetch of the page comes before it."""
    page = "<!DOCTYPE html>\n<script>1</script><html><head></head><body>x</body></html>"
    got = reference.with_policy(page)
    assert got.startswith('<!DOCTYPE html><meta http-equiv="Content-Security-Policy"'), got
    assert got.index("Content-Security-Policy") < got.index("<script>")
    assert reference.with_policy("<p>x</p>").startswith("<meta http-equiv=")
    assert "script-src" not in reference.PAGE_POLICY and "default-src 'none'" in (
        reference.PAGE_POLICY)


@pytest.mark.parametrize(("url", "allowed"), [
    ("data:image/png;base64,AAAA", True),
    ("file://{work}/figure.svg", True),
    ("file://{work}/sub/../figure.svg", True),
    ("file://{work}/../outside/secret.txt", False),
    ("file://{work}/link-out/secret.txt", False),
    ("file:///etc/passwd", False),
    ("file://otherhost{work}/figure.svg", False),
    ("http://127.0.0.1:9/x.css", False),
    ("https://example.org/x.css", False),
    ("ftp://example.org/x", False),
    ("javascript:alert(1)", False),
    ("figure.svg", False),
])
def test_the_urls_weasyprint_may_load(url: str, allowed: bool, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    outside = _outside(tmp_path)
    (work / "link-out").symlink_to(outside, target_is_directory=True)
    assert reference.allowed_url(url.format(work=work), work) is allowed
