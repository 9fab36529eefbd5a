"""A tiny PDF text reader: each page's size and text, for the `pdf` command's index pass.

It reads the PDFs Chromium (Skia) writes: plain page trees, Flate-compressed content streams
and ToUnicode maps. It is not a general PDF parser: a PDF it cannot read (compressed object or
cross-reference streams, say) raises `PdfTextError`, and the caller falls back to something
else. Standard library only: the product does not depend on poppler.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator


class PdfTextError(ValueError):
    """The PDF is not one this reader understands."""


_OBJ = re.compile(rb"(\d+) 0 obj\s*(.*?)\s*endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_MEDIABOX = re.compile(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]")


def _objects(pdf: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in _OBJ.finditer(pdf)}


def _stream(body: bytes) -> bytes:
    m = _STREAM.search(body)
    if m is None:
        return b""
    data = m.group(1)
    if b"/FlateDecode" not in body[: m.start()]:
        return data
    try:
        return zlib.decompress(data)
    except zlib.error:  # the data ended in a CR, taken for the line break before endstream
        try:
            return zlib.decompress(data + b"\r")
        except zlib.error as exc:
            raise PdfTextError(f"a stream does not inflate: {exc}") from None


def _ref(body: bytes, key: bytes) -> int | None:
    m = re.search(rb"/" + key + rb"\s+(\d+) 0 R", body)
    return int(m.group(1)) if m else None


def _cmap(data: bytes) -> dict[int, str]:
    out: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(src, 16)] = bytes.fromhex(dst.decode()).decode("utf-16-be", "replace")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.S):
        for lo, hi, dst in re.findall(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block
        ):
            start = int(dst, 16)
            for i, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                out[code] = chr(start + i)
    return out


def _page_ids(objs: dict[int, bytes], node_id: int, depth: int = 0) -> Iterator[int]:
    node = objs.get(node_id)
    if node is None or depth > 32:
        raise PdfTextError(f"page tree node {node_id} is missing")
    if re.search(rb"/Type\s*/Pages\b", node):
        kids = re.search(rb"/Kids\s*\[(.*?)\]", node, re.S)
        if kids is None:
            raise PdfTextError("a page tree node has no kids")
        for k in re.findall(rb"(\d+) 0 R", kids.group(1)):
            yield from _page_ids(objs, int(k), depth + 1)
    else:
        yield node_id


# A font selection, a hex string, the end of a text object, or a text position (Td/Tm: the
# y of the line, for the caller's page-fill measure).
_TOKENS = re.compile(
    rb"/(\w+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>|\b(ET)\b"
    rb"|([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+Tm"
)


def read_pdf(pdf: bytes) -> list[tuple[tuple[float, float], str]]:
    """Each page's (width, height) in points and its text, in drawing order (a line break
    after each text object)."""
    return [(size, "".join(t for _, t in runs)) for size, runs in read_runs(pdf)]


def read_runs(pdf: bytes) -> list[tuple[tuple[float, float], list[tuple[float, str]]]]:
    """Each page's size and its text runs as (y of the text matrix, in points from the page's
    bottom; text): what `read_pdf` joins. A run with no Tm before it has y = -1."""
    if not pdf.startswith(b"%PDF"):
        raise PdfTextError("not a PDF")
    objs = _objects(pdf)
    if b"trailer" not in pdf:
        raise PdfTextError("no trailer (a compressed cross-reference stream?)")
    root_id = _ref(pdf[pdf.rindex(b"trailer") :], b"Root")
    if root_id is None or root_id not in objs:
        raise PdfTextError("no document catalog (a compressed xref?)")
    pages_id = _ref(objs[root_id], b"Pages")
    if pages_id is None:
        raise PdfTextError("no page tree")
    cmaps: dict[int, dict[int, str]] = {}
    out: list[tuple[tuple[float, float], list[tuple[float, str]]]] = []
    for pid in _page_ids(objs, pages_id):
        page = objs[pid]
        box = _MEDIABOX.search(page)
        if box is None:
            raise PdfTextError(f"page object {pid} has no MediaBox")
        x0, y0, x1, y1 = (float(v) for v in box.groups())
        fonts: dict[bytes, dict[int, str]] = {}
        font_dict = re.search(rb"/Font\s*<<(.*?)>>", page, re.S)
        if font_dict:
            for name, num in re.findall(rb"/(\w+)\s+(\d+) 0 R", font_dict.group(1)):
                fid = int(num)
                if fid not in cmaps:
                    tu = _ref(objs.get(fid, b""), b"ToUnicode")
                    cmaps[fid] = _cmap(_stream(objs[tu])) if tu in objs else {}
                fonts[name] = cmaps[fid]
        contents = re.search(rb"/Contents\s+(?:(\d+) 0 R|\[(.*?)\])", page, re.S)
        if contents is None:
            out.append(((x1 - x0, y1 - y0), []))
            continue
        ids = (
            [int(contents.group(1))]
            if contents.group(1)
            else [int(x) for x in re.findall(rb"(\d+) 0 R", contents.group(2))]
        )
        content = b"\n".join(_stream(objs.get(i, b"")) for i in ids)
        font: dict[int, str] = {}
        runs: list[tuple[float, str]] = []
        y = -1.0
        for tok in _TOKENS.finditer(content):
            if tok.group(1) is not None:
                font = fonts.get(tok.group(1), {})
            elif tok.group(2) is not None:
                hx = tok.group(2).decode()
                step = 4 if len(hx) % 4 == 0 and max(font, default=0) > 255 else 2
                runs.append(
                    (
                        y,
                        "".join(
                            font.get(int(hx[i : i + step], 16), "") for i in range(0, len(hx), step)
                        ),
                    )
                )
            elif tok.group(3) is not None:
                runs.append((y, "\n"))
            else:
                y = float(tok.group(9))
        out.append(((x1 - x0, y1 - y0), runs))
    return out


__all__ = ["PdfTextError", "read_pdf", "read_runs"]
