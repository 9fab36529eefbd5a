"""`lisboa-rules pdf`: print the rules reference and the player aid to PDF.

The HTML pages are compiled from the rules exactly as `build` does (nothing is read from
generated/), then printed by WeasyPrint when it is importable (the `pdf` extra), otherwise by a
Chromium on the PATH (`--headless --print-to-pdf`), otherwise the command says what to install
and exits 2. PDF is a build artifact, not a committed output: it is not covered by
`build --check`, and it goes to dist/ by default.

`--variant NAME` prints the rules as the variant makes them (folded, as `build --variant`) and
the variant's one-page handout (`variant-NAME.pdf`: what it changes, word by word);
`--house FILE` (repeatable, as for `build` and `validate`) adds a house rule kept outside the
rules folder: its handout prints too, and `--variant ID` folds it in as well;
`--edition annotated` prints the annotated rules (every rule id, source and assumption mark) as
`rules-annotated.pdf` in place of the players' edition.

The pages are data from the rules (a house rule from a stranger included), so neither printer
runs a script or fetches anything: WeasyPrint runs no script, and its URL fetcher loads only
data: URLs and files of the page's own private folder; Chromium prints the page under a
Content Security Policy that forbids scripts and every fetch (`with_policy`), with every
request sent to a dead proxy and no host name resolving (CHROMIUM_FLAGS). Each PDF is printed
in a private temporary folder and then written into --out as a new file renamed over the old
one (outputs/files.py): a symlink there is replaced, never written through.

A4 is the default paper; `--paper letter` adds a later `@page { size: letter }` rule to the
pages before printing (the generated HTML itself stays A4).
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lisboa_rules.cli.common import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    Command,
    add_house_option,
    err,
    out,
    report,
)
from lisboa_rules.core.diagnostics import PROG, has_errors
from lisboa_rules.core.inputs import AID_HTML, RULES_ANNOTATED_HTML, RULES_HTML, variant_handout
from lisboa_rules.outputs import files

PAGES = {"rules": RULES_HTML, "player-aid": AID_HTML}
EDITIONS = {"players": RULES_HTML, "annotated": RULES_ANNOTATED_HTML}
PAPERS = ("a4", "letter")
BACKENDS = ("auto", "weasyprint", "chromium")
CHROMIUM_NAMES = ("chromium", "chromium-browser")
# Offline, no profile reuse, no first-run work: the browser only prints one local file. Every
# request goes to a proxy at the discard port, which nobody serves, loopback addresses
# included (`<-loopback>`), and no host name resolves; the page itself forbids scripts and
# every fetch (PAGE_POLICY). (`--blink-settings=scriptEnabled=false` would turn scripts off
# too, but Chromium's new headless mode then prints nothing.)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-pdf-header-footer",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-extensions",
    "--disable-file-system",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
# The Content Security Policy every page is printed under by Chromium: no script runs, nothing
# is fetched (no URL on the network or on the disk; the pages' figures are inline SVG and
# their fonts the system's); only the page's own styles and data: images and fonts.
PAGE_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
               "base-uri 'none'; form-action 'none'")
_DOCTYPE = re.compile(r"\A\ufeff?\s*<!doctype[^>]*>", re.IGNORECASE)
CHROMIUM_TIMEOUT = 120  # seconds per page

Printer = Callable[[str, Path, Path], None]  # (html, work dir, target pdf)


class PdfError(Exception):
    """A back end failed to print a page."""


def with_paper(html: str, paper: str) -> str:
    """The page with a later `@page { size }` rule for `paper` (A4 pages are left as they are)."""
    if paper == "a4":
        return html
    rule = f"<style>@page {{ size: {paper}; }}</style>\n"
    head_end = html.find("</head>")
    return html[:head_end] + rule + html[head_end:] if head_end >= 0 else rule + html


def with_policy(html: str) -> str:
    """The page with PAGE_POLICY as its very first element (after the doctype, which keeps
    the page in standards mode): a `<meta>` before `<html>` lands in the head, and a policy
    applies to everything after it, so nothing in the page comes before it."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{PAGE_POLICY}">'
    found = _DOCTYPE.match(html)
    at = found.end() if found else 0
    return html[:at] + meta + html[at:]


def allowed_url(url: str, folder: Path) -> bool:
    """Whether a printer may load `url` for a page printed in `folder`: a data: URL, or a
    file inside `folder` (after resolving symlinks); nothing on the network, nothing else on
    the disk."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "data":
        return True
    if scheme != "file" or parts.netloc not in ("", "localhost"):
        return False
    try:
        path = Path(urllib.request.url2pathname(parts.path)).resolve()
        return path.is_relative_to(folder.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def _weasy_fetcher(module: Any, folder: Path) -> Any:
    """WeasyPrint's URL fetcher for a page in `folder`: it refuses (raises ValueError, which
    WeasyPrint reports as a warning and skips) every URL `allowed_url` does not allow."""

    def check(url: str) -> None:
        if not allowed_url(url, folder):
            raise ValueError(f"refused {url[:200]!r}: the page may only load files of its "
                             "own folder")

    # the fetcher's class, where WeasyPrint has one (its package imports weasyprint.urls)
    base = getattr(getattr(module, "urls", None), "URLFetcher", None)
    if base is None:  # an older WeasyPrint: the fetcher is a function
        def fetch_function(url: str, *args: Any, **kwargs: Any) -> Any:
            check(url)
            return module.default_url_fetcher(url, *args, **kwargs)

        return fetch_function

    def fetch(self: Any, url: str, headers: Any = None) -> Any:
        check(url)
        return base.fetch(self, url, headers)

    fetcher = type("FolderFetcher", (base,), {"fetch": fetch})
    return fetcher(allowed_protocols=("file", "data"), allow_redirects=False)


def _weasy_document(module: Any, html: str, work: Path) -> Any:
    """WeasyPrint's HTML object of a page printed in `work` (it runs no script; its fetcher
    only loads files of `work`)."""
    return module.HTML(string=html, base_url=str(work), url_fetcher=_weasy_fetcher(module, work))


def find_chromium() -> str | None:
    """The first Chromium on the PATH, if any."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _weasyprint() -> Any | None:
    try:
        return importlib.import_module("weasyprint")
    except ImportError:
        return None
    except OSError:  # installed, but the system libraries (Pango) are missing
        return None


def choose_printer(backend: str) -> tuple[str, Printer] | None:
    """The back end to use: (name, printer), or None when none is available."""
    if backend in ("auto", "weasyprint"):
        module = _weasyprint()
        if module is not None:
            return "weasyprint", _weasy_printer(module)
        if backend == "weasyprint":
            return None
    exe = find_chromium()
    if exe is not None:
        return "chromium", _chromium_printer(exe)
    return None


def _weasy_printer(module: Any) -> Printer:
    def print_page(html: str, work: Path, target: Path) -> None:
        try:
            _weasy_document(module, html, work).write_pdf(str(target))
        except Exception as exc:  # WeasyPrint raises many kinds; report any as one line
            raise PdfError(f"WeasyPrint failed: {exc}") from None

    return print_page


def _chromium_printer(exe: str) -> Printer:
    def print_page(html: str, work: Path, target: Path) -> None:
        page = work / "page.html"
        page.unlink(missing_ok=True)  # the page of the index's first printing
        files.write_new_file(page, with_policy(html).encode("utf-8"))
        command = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={work / 'profile'}",
                   f"--print-to-pdf={target}", page.as_uri()]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=CHROMIUM_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PdfError(f"chromium failed: {exc}") from None
        if not target.is_file() or not target.read_bytes().startswith(b"%PDF"):
            detail = " ".join(done.stderr.split())[-300:]
            raise PdfError(f"chromium wrote no PDF (exit {done.returncode}): {detail}")

    return print_page


def print_indexed(name: str, printer: Printer, html: str, work: Path, target: Path) -> None:
    """Print `html`; a page with an index of page numbers (emit.reference.pageindex) is laid
    out twice. Chromium (no CSS target-counter) prints it with markers at the index's targets
    first, and the PDF's text says on which page each landed; WeasyPrint's layout names the
    anchors of each page. Then the page is printed with the numbers filled in."""
    from lisboa_rules.emit.reference import pageindex
    from lisboa_rules.outputs.pdftext import PdfTextError, read_pdf

    targets = pageindex.anchors(html)
    if not targets:
        printer(html, work, target)
        return
    module = _weasyprint() if name == "weasyprint" else None
    problem = ""
    if module is not None:  # WeasyPrint lays the page out and says where each anchor lands
        try:
            laid_out = _weasy_document(module, html, work).render()
        except Exception as exc:  # WeasyPrint raises many kinds; report any as one line
            raise PdfError(f"WeasyPrint failed: {exc}") from None
        pages: dict[str, int] = {}
        for number, page in enumerate(laid_out.pages, start=1):
            for anchor in page.anchors:
                pages.setdefault(anchor, number)
    else:
        printer(pageindex.mark(html, targets), work, target)
        try:
            pages = pageindex.locate([text for _, text in read_pdf(target.read_bytes())],
                                     targets)
        except PdfTextError as exc:
            pages, problem = {}, str(exc)
    missing = [t for t in targets if t not in pages]
    if missing and not problem:
        problem = f"these targets did not print: {', '.join(missing[:5])}"
    if problem:  # the index keeps its links, without page numbers
        err(f"{PROG}: warning: the index has no page numbers ({name}: {problem})\n")
        printer(html, work, target)
        return
    printer(pageindex.fill(html, pages), work, target)


def _configure(p: argparse.ArgumentParser) -> None:
    """Add the pdf options."""
    p.add_argument("--rules", type=Path, default=Path("rules"), metavar="DIR",
                   help="rules directory (default: rules/)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="diagnostics format (json goes to stdout)")
    p.add_argument("--out", type=Path, default=Path("dist"), metavar="DIR",
                   help="where to write rules.pdf and player-aid.pdf (default: dist/)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="fold a variant (a house rule) into the base game, as build --variant "
                   "does (repeatable): the rules print as the variant makes them, and each "
                   "variant's one-page handout (what changes, word by word) prints as "
                   "variant-NAME.pdf; the PDF names and titles say which")
    add_house_option(p)
    p.add_argument("--edition", choices=tuple(EDITIONS), default="players",
                   help="players: the rules to play by (default); annotated: with every rule "
                   "id, source and assumption mark")
    p.add_argument("--paper", choices=PAPERS, default="a4", help="paper size (default: a4)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="auto: WeasyPrint if installed, else chromium on the PATH")


def run_pdf(args: argparse.Namespace) -> int:
    """Compile the rules, then print each reference page to PDF."""
    from lisboa_rules import pipeline  # only when building, not at start-up

    # The rules first: a designer whose edit is refused hears why, with or without a printer.
    variants = tuple(args.variant)
    house = tuple(getattr(args, "house", ()))
    result = pipeline.compile_rules(args.rules, variants, extra=house)
    if has_errors(result.diagnostics):
        report(result.diagnostics, args.format)
        return EXIT_FINDINGS
    chosen = choose_printer(args.backend)
    if chosen is None:
        want = {"weasyprint": "WeasyPrint (pip install 'lisboa-rules[pdf]')",
                "chromium": "Chromium on the PATH (apt-get install chromium)"}
        options = [want[args.backend]] if args.backend in want else list(want.values())
        err(f"{PROG}: error: no PDF back end: install {' or '.join(options)}; "
            "the HTML reference in generated/reference/ prints from any browser\n")
        return EXIT_ERROR
    name, printer = chosen
    folded = result.compiled.folded if result.compiled is not None else ()
    paper = "" if args.paper == "a4" else f"-{args.paper}"
    suffix = "".join(f"-{v}" for v in folded) + paper
    edition = getattr(args, "edition", "players")
    pages = {stem: result.files[rel] for stem, rel in PAGES.items()}
    if edition != "players":  # the annotated rules in place of the players' (rules-annotated)
        pages = {(f"rules-{edition}" if stem == "rules" else stem):
                 (result.files[EDITIONS[edition]] if stem == "rules" else html)
                 for stem, html in pages.items()}
    # the handouts: of each variant folded in, and of each --house file (folded or an option)
    wanted = tuple(dict.fromkeys([*folded, *_house_ids(result, house)]))
    handouts = _handouts(args.rules, wanted, house) if wanted else {}
    if handouts is None:
        return EXIT_FINDINGS
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        for stem, page_html in [*((s + suffix, h) for s, h in pages.items()),
                                *((s + paper, h) for s, h in handouts.items())]:
            html = with_paper(page_html, args.paper)
            target = args.out / f"{stem}.pdf"
            # Printed in a private temporary folder, then written into --out as a new file
            # renamed over the target (outputs/files.py): all or nothing, no half-written
            # PDF, and a symlink planted at the target is replaced, not written through.
            with tempfile.TemporaryDirectory(prefix="lisboa-pdf-") as tmp:
                printed = Path(tmp) / f"{stem}.pdf"
                print_indexed(name, printer, html, Path(tmp), printed)
                files.write_file_atomic(target, printed.read_bytes())
            out(f"{target}\n")
    except (PdfError, OSError) as exc:
        err(f"{PROG}: error: {exc}\n")
        return EXIT_ERROR
    err(f"{PROG}: printed {len(pages) + len(handouts)} PDF files with {name} ({args.paper}) "
        f"into {args.out}/\n")
    return EXIT_OK


def _house_ids(result: Any, house: tuple[Path, ...]) -> list[str]:
    """The ids of the variants the --house files declare (a variant's span names the file it
    was read from, as the diagnostics show it: relative to the working folder)."""
    compiled = result.compiled
    if compiled is None or not house:
        return []
    wanted = {p.resolve() for p in house}
    return [v.id for v in compiled.variants if Path(v.span.file).resolve() in wanted]


def _handouts(rules: Path, variants: tuple[str, ...],
              house: tuple[Path, ...] = ()) -> dict[str, str] | None:
    """The one-page handout of each variant, `variant-NAME` -> HTML: what it changes against
    the base game, so the rules are compiled once more with the variants (and the --house
    files) as options (None, with the diagnostics reported, when that does not compile)."""
    from lisboa_rules import pipeline

    plain = pipeline.compile_rules(rules, extra=house)
    if has_errors(plain.diagnostics):
        report(plain.diagnostics, "text")
        return None
    out: dict[str, str] = {}
    for v in variants:
        html = plain.files.get(variant_handout(v, "html"))
        if html is None:  # a variant the engine only builds folded: no page of its own
            err(f"{PROG}: note: no handout for '{v}': it is only built folded\n")
            continue
        out[f"variant-{v}"] = html
    return out


COMMANDS: dict[str, Command] = {
    "pdf": Command("print the rules reference and the player aid to PDF (WeasyPrint or "
                   "chromium)", _configure, run_pdf),
}
