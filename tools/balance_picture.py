"""Remake docs/balance-report.png, the picture of a balance report the docs show.

    python3 tools/balance_picture.py [--keep-html FILE]

It runs COMMAND (what docs/reference/balance.md prints under the picture) from the repository
root, writing the HTML report to a temporary folder, takes a screenshot of the top of the page with
Chromium headless (`apt-get install chromium`) and saves it with a small palette (Pillow) as
docs/balance-report.png. The games are seeded, so the numbers are the same on every machine;
the pixels may differ a little with Chromium's version and fonts.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "balance-report.png"
# Under the picture in docs/reference/balance.md (tests/sim/test_balance_cli.py checks it).
COMMAND = (
    "lisboa-rules balance --games 200 --players 3 --seed 1 --agents greedy "
    "--compare examples/house-rules/rubble-bounty.yaml --jobs 2 --format html "
    "--out balance.html"
)
WINDOW = (900, 1560)  # CSS pixels: the title and the three plots
COLORS = 64  # the palette of the saved PNG (the plots use few colours)


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("Chromium is needed for the screenshot (Debian: apt-get install chromium)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keep-html", type=Path, default=None, metavar="FILE",
                   help="also keep the HTML report as FILE")
    args = p.parse_args(argv)
    from PIL import Image

    with tempfile.TemporaryDirectory(prefix="lisboa-picture-") as tmp:
        work = Path(tmp)
        html = work / "balance.html"
        argv_run = shlex.split(COMMAND)
        assert argv_run[0] == "lisboa-rules" and argv_run[-2] == "--out"
        run = [sys.executable, "-m", "lisboa_rules", *argv_run[1:-1], str(html)]
        subprocess.run(run, cwd=ROOT, check=True)
        if args.keep_html is not None:
            shutil.copyfile(html, args.keep_html)
        shot = work / "shot.png"
        subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--disable-background-networking", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={work / 'profile'}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
             f"--screenshot={shot}", html.as_uri()],
            cwd=work, check=True, capture_output=True, timeout=120,
        )
        image = Image.open(shot).convert("RGB").quantize(COLORS, dither=Image.Dither.NONE)
        TARGET.parent.mkdir(exist_ok=True)
        image.save(TARGET, optimize=True)
    print(f"wrote {TARGET.relative_to(ROOT)} ({TARGET.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
