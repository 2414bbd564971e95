"""Scale-up domain (lecture §1.7): what C chips in one domain buy — the Scale-up page."""

from __future__ import annotations

from model import System
from ui.equations import STRUT, row, tex_num
from ui.equations.batch import latency_floor


def domain(s: System) -> str:
    """Bandwidth and capacity both grow with C, so the latency floor W/(C·bw) falls as 1/C."""
    C, bw, M = s.deployment.chips, s.hbm_bandwidth, s.hardware.hbm_bytes
    return (rf"\begin{{aligned}}bw_{{agg}} &= C\cdot bw = {C:g}\times{tex_num(bw, 'B/s')} = "
            rf"{tex_num(C * bw, 'B/s')}\\[4pt] M_{{agg}} &= C\cdot M = {C:g}\times{tex_num(M, 'B')} = "
            rf"{tex_num(C * M, 'B')}\\[4pt] " + row(latency_floor(s)) + STRUT + r"\end{aligned}")
