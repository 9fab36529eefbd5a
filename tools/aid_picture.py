"""Remake docs/player-aid.png, the picture of the printed player aid the README shows.

    python3 tools/aid_picture.py [--pdf FILE] [--dpi N]

It prints generated/reference/player-aid.html (run `lisboa-rules build` first) with Chromium
headless (`apt-get install chromium`) to a PDF, as a designer's "Print" would (A4, the page's
own margins), renders its two pages with pdftoppm (poppler-utils) and saves them side by side,
the sheet's two sides, with a small palette (Pillow) as docs/player-aid.png. The pixels may
differ a little with Chromium's version and fonts.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "generated" / "reference" / "player-aid.html"
TARGET = ROOT / "docs" / "player-aid.png"
DPI = 64  # two A4 sides at 64 dpi: about 1060 x 750 pixels
COLORS = 96  # the palette of the saved PNG
GAP = 12  # pixels between the two sides


def tool(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit(f"{names[0]} is needed (Debian: apt-get install chromium poppler-utils)")


def print_pdf(html: Path, pdf: Path, work: Path) -> None:
    subprocess.run(
        [tool("chromium", "chromium-browser"), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--no-first-run", "--disable-extensions",
         f"--user-data-dir={work / 'profile'}", "--no-pdf-header-footer",
         f"--print-to-pdf={pdf}", html.as_uri()],
        cwd=work, check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pdf", type=Path, default=None, metavar="FILE",
                   help="also keep the printed PDF as FILE")
    p.add_argument("--dpi", type=int, default=DPI)
    p.add_argument("--out", type=Path, default=TARGET)
    args = p.parse_args(argv)
    from PIL import Image

    if not SOURCE.exists():
        raise SystemExit(f"{SOURCE.relative_to(ROOT)} is missing: run `lisboa-rules build`")
    with tempfile.TemporaryDirectory(prefix="lisboa-aid-") as tmp:
        work = Path(tmp)
        pdf = work / "player-aid.pdf"
        print_pdf(SOURCE, pdf, work)
        if args.pdf is not None:
            shutil.copyfile(pdf, args.pdf)
        subprocess.run([tool("pdftoppm"), "-png", "-r", str(args.dpi), "-f", "1", "-l", "2",
                        str(pdf), str(work / "side")], check=True, capture_output=True)
        sides = [Image.open(f).convert("RGB") for f in sorted(work.glob("side-*.png"))]
        width = sum(s.width for s in sides) + GAP * (len(sides) - 1)
        sheet = Image.new("RGB", (width, max(s.height for s in sides)), (200, 200, 200))
        x = 0
        for s in sides:
            sheet.paste(s, (x, 0))
            x += s.width + GAP
        image = sheet.quantize(COLORS, dither=Image.Dither.NONE)
        args.out.parent.mkdir(exist_ok=True)
        image.save(args.out, optimize=True)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes, {len(sides)} pages)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
