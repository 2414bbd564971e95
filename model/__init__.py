"""roofline: a plain numpy model of LLM serving economics (no Streamlit here).

    from model import presets, System, decode_step
    sys = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"))
    decode_step(sys.with_(chips=8), batch=[1, 64, 1024], context=8192).t_step_s
"""

from . import economics, presets, roofline, training
from .roofline import (
    KVLayout,
    StepResult,
    System,
    auto_chips,
    balance_batch,
    context_never_compute_bound,
    decode_step,
    hbm_drain_time,
    kv_crossover_context,
    max_batch_that_fits,
    prefill,
    request,
    system_balance_batch,
)
from .specs import DTYPE_BYTES, Deployment, Hardware, ModelArch, Precision

__all__ = [
    "DTYPE_BYTES", "Deployment", "Hardware", "KVLayout", "ModelArch", "Precision", "StepResult",
    "System", "auto_chips", "balance_batch", "context_never_compute_bound", "decode_step",
    "economics", "hbm_drain_time", "kv_crossover_context", "max_batch_that_fits", "prefill",
    "presets", "request", "roofline", "system_balance_batch", "training",
]
