"""The View a walkthrough step or a deck slide is drawn from, built here from the presets (as the sidebar would)."""

from __future__ import annotations

from model import ModelArch, System, auto_chips, presets
from ui.state.view import View


def view(hw: str = "h100", model: str | ModelArch = "llama-3.1-70b", chips: int | None = 8, batch: float = 64.0,
         context: float = 8192.0) -> View:
    """The chip and model presets (or a model of one's own) on `chips` chips, or C 'auto' (model.auto_chips: enough
    to hold the weights and the KV of `batch` sequences of `context` tokens) when `chips` is None."""
    m = presets.get("model", model) if isinstance(model, str) else model
    s = System(presets.get("hardware", hw), m)
    c = auto_chips(s.hardware, m, s.precision, batch, context) if chips is None else chips
    return View(s.with_(chips=c), batch, context, chips is None, hw, model if isinstance(model, str) else m.name)
