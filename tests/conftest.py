"""Fixtures used in more than one folder (tests/model, tests/ui/figures, tests/ui/elements): explicit specs (no
presets needed) with round, checkable numbers.  A folder's own fixtures are in its conftest.py."""

import pytest

from model import Deployment, Hardware, ModelArch, Precision, System


@pytest.fixture
def h100() -> Hardware:
    # NVIDIA H100 SXM5 datasheet: 989 TFLOP/s dense bf16, 1,979 fp8, 80 GB HBM3 at 3.35 TB/s.
    return Hardware(name="H100", flops_bf16_per_s=989e12, flops_fp8_per_s=1979e12, hbm_bytes=80e9,
                    hbm_bandwidth_bytes_per_s=3.35e12, price_usd_per_hour=2.0, scaleup_domain_chips=8,
                    power_w=700.0)


@pytest.fixture
def lecture_gpu() -> Hardware:
    # The lecture's round numbers: F/bw = 300 at bf16 (600 at fp8), $2/h.
    return Hardware(name="lecture", flops_bf16_per_s=2.4e15, flops_fp8_per_s=4.8e15, hbm_bytes=192e9,
                    hbm_bandwidth_bytes_per_s=8e12, price_usd_per_hour=2.0, scaleup_domain_chips=72)


@pytest.fixture
def llama70() -> ModelArch:
    # Llama 3.1 70B config: 80 layers, d_model 8192, 64 heads, 8 KV heads, head_dim 128.
    return ModelArch(name="llama70", total_params=70.6e9, active_params=70.6e9, n_layers=80, d_model=8192,
                     n_heads=64, n_kv_heads=8, head_dim=128)


@pytest.fixture
def deepseek() -> ModelArch:
    # DeepSeek-V3 config_671B.json: 61 layers, MLA kv_lora_rank 512, qk_rope 64, 128 heads.
    return ModelArch(name="dsv3", total_params=671e9, active_params=37e9, n_layers=61, d_model=7168,
                     n_heads=128, n_kv_heads=128, head_dim=128, attention="mla", kv_lora_rank=512,
                     qk_rope_dim=64, n_experts=256, experts_per_token=8, n_shared_experts=1)


@pytest.fixture
def sys70(h100, llama70) -> System:
    return System(h100, llama70, Precision(), Deployment(chips=8))

