"""Formatting generated source text: re-breaking long lines and packing launch calls.

Kept apart from ``assemble.py`` because it is plain text work on any generated module (no trace, no torch):
the lowering's families call ``wrap_call`` while they write launches, and ``assemble`` re-breaks the result.
"""

from __future__ import annotations


def _split_top_level(text: str, depth0: int) -> list[str]:
    """Split ``text`` after each ", " at bracket depth ``depth0`` (nested calls stay on one piece)."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == depth0 and text[i + 1:i + 2] == " ":
            pieces.append(text[start:i + 1])
            start = i + 2
    pieces.append(text[start:])
    return pieces


def wrap_code(source: str, width: int = 112) -> str:
    """Re-break over-long code lines (kernel signatures, launch arguments) at top-level commas."""
    out = []
    for line in source.split("\n"):
        if len(line) <= width or "#" in line or '"' in line or "'" in line:
            out.append(line)
            continue
        is_def = line.lstrip().startswith("def ")
        indent = " " * (line.index("(") + 1) if is_def else " " * (len(line) - len(line.lstrip()))
        current = ""
        for piece in _split_top_level(line, 1 if is_def else 0):
            candidate = f"{current} {piece}" if current else piece
            if current and len(candidate) > width:
                out.append(current)
                current = indent + piece
            else:
                current = candidate
        out.append(current)
    return "\n".join(out)


def wrap_call(head: str, args: list[str], indent: str = "            ", width: int = 112) -> str:
    """``head(`` then ``args`` packed onto continuation lines of at most ``width`` columns, then ``)``."""
    lines, current = [], indent
    for arg in args:
        piece = f"{arg}, "
        if current.strip() and len(current) + len(piece.rstrip()) > width:
            lines.append(current.rstrip())
            current = indent
        current += piece
    lines.append(current.rstrip().rstrip(",") + ")")
    return head + "(\n" + "\n".join(lines)
