"""The audience link as a QR code: segno (pure Python) draws it as an inline SVG.

`matrix` and `svg_matrix` exist so a test can read the drawn modules back and compare them with
the code of the expected link.
"""

from __future__ import annotations

import base64
import io
import re

import segno

ERROR = "m"            # ~15 % of the code may be lost (a projector's glare, a head in the way) and still read
BORDER = 4             # the quiet zone the QR standard asks for, in modules


def make(text: str) -> segno.QRCode:
    return segno.make(text, error=ERROR, micro=False)


def matrix(text: str) -> list[list[int]]:
    """The code's modules (1 = dark), quiet zone included: what a scanner reads."""
    return [list(row) for row in make(text).matrix_iter(border=BORDER)]


def svg(text: str, title: str = "") -> str:
    """The QR code as a standalone SVG document (with its namespace, so it also works as an <img>),
    with a viewBox and no fixed size: the page sizes it."""
    buf = io.BytesIO()
    make(text).save(buf, kind="svg", xmldecl=False, svgns=True, border=BORDER, omitsize=True, dark="#000",
                    light="#fff", svgclass="audience-qr", title=title or None, nl=False)
    return buf.getvalue().decode("utf-8")


def svg_data_uri(text: str, title: str = "") -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg(text, title).encode("utf-8")).decode("ascii")


_MOVE = re.compile(r"([MmHhVv])\s*(-?\d+(?:\.\d+)?)(?:\s+(-?\d+(?:\.\d+)?))?")


def svg_matrix(svg_text: str) -> list[list[int]]:
    """Read the modules back from segno's SVG: one path of horizontal strokes ('M x y.5 h n m dx dy …'),
    each stroke 1 unit thick along the row y; the viewBox gives the size."""
    box = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg_text)
    path = re.search(r'<path[^>]*stroke="#000"[^>]* d="([^"]+)"', svg_text)   # the dark modules
    if not box or not path:
        raise ValueError("not a segno QR code SVG")
    w, h = int(box.group(1)), int(box.group(2))
    grid = [[0] * w for _ in range(h)]
    x = y = 0.0
    for cmd, a, b in _MOVE.findall(path.group(1)):
        a = float(a)
        if cmd == "M":
            x, y = a, float(b)
        elif cmd == "m":
            x, y = x + a, y + float(b)
        elif cmd in "hH":
            end = x + a if cmd == "h" else a
            row = int(y)                     # the stroke is centred on y = row + 0.5
            for col in range(round(min(x, end)), round(max(x, end))):
                grid[row][col] = 1
            x = end
        else:
            raise ValueError(f"unexpected path command {cmd!r}")
    return grid
