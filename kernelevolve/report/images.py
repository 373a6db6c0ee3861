"""The report's figures as PNG or SVG files, for papers and pull requests.

Kaleido (v1) renders them in a headless Chrome or Chromium it finds on the machine (Debian's ``chromium``
works; ``BROWSER_PATH`` names another). All figures go through one browser session. Without a browser the
command fails with one line saying what to install; nothing is fetched.
"""

from __future__ import annotations

from pathlib import Path

from kernelevolve.errors import UserError
from kernelevolve.report.page import NamedFigure

IMAGE_FORMATS = ("png", "svg")


def image_paths(figures: list[NamedFigure], html_path: Path, fmt: str) -> list[Path]:
    """report.html -> report-tree.png, report-trajectory.png, ... next to it."""
    return [html_path.with_name(f"{html_path.stem}-{f.name}.{fmt}") for f in figures]


def write_images(figures: list[NamedFigure], html_path: Path, fmt: str) -> list[Path]:
    import plotly.io as pio

    if fmt not in IMAGE_FORMATS:
        raise ValueError(fmt)
    paths = image_paths(figures, html_path, fmt)
    if not figures:
        return []
    try:
        pio.write_images([f.figure for f in figures], paths, format=fmt,
                         width=[f.image_width for f in figures],
                         height=[int(f.figure.layout.height or 450) for f in figures],
                         scale=2 if fmt == "png" else 1)
    except Exception as exc:  # kaleido's errors (no browser, a crashed one) all mean "cannot export here"
        first = " ".join(str(exc.args[0] if exc.args else exc).split())[:200] or type(exc).__name__
        raise UserError(f"cannot write {fmt.upper()} figures: {first} (kaleido needs Chrome or Chromium: "
                        "'apt-get install chromium', or set BROWSER_PATH)") from None
    return paths
