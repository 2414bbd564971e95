"""presets/measurements.yaml: every measurement loads with a source, a date and a complete setup; the
published figures convert to output tokens/s per GPU as their metric says; bad entries are rejected."""

from __future__ import annotations

import pytest

from model import presets
from model.presets import THROUGHPUT_METRICS, Measurement, PresetError, dump_item, parse_text

ITEMS = presets.measurement_presets()
SETUP = ("model", "hardware", "publisher", "weights", "kv", "compute", "scope", "gpus", "chips_per_replica",
         "input_tokens", "output_tokens", "throughput", "throughput_metric")


def test_there_are_measurements_from_every_source_family():
    pubs = {m.publisher for m in ITEMS.values()}
    assert {"DeepSeek", "LMSYS", "NVIDIA", "SemiAnalysis", "Alibaba"} <= pubs
    assert len(ITEMS) >= 50


@pytest.mark.parametrize("key", list(ITEMS))
def test_every_measurement_has_a_source_and_a_complete_setup(key):
    m = ITEMS[key]
    for f in SETUP:
        assert getattr(m, f) not in (None, ""), f"{key}: {f} missing"
    # The presets it names exist, and the chip has the compute format it claims.
    hw = presets.get("hardware", m.hardware)
    presets.get("model", m.model)
    assert m.compute in hw.compute_dtypes(), key
    # Every number carries a source and a date (on the field or the entry); uncertain ones say why.
    for f in ("gpus", "chips_per_replica", "input_tokens", "output_tokens", "throughput"):
        meta = m.meta.get(f)
        assert meta is not None and meta.source.strip() and meta.date.strip(), f"{key}.{f}: no source/date"
        if meta.uncertain:
            assert meta.note.strip(), f"{key}.{f}: uncertain without a note"
    for f, meta in m.meta.items():
        assert meta.source.strip() and meta.date.strip(), f"{key}.{f}"
        if meta.uncertain:
            assert meta.note.strip(), f"{key}.{f}: uncertain without a note"
    # A per-user speed, when given, is a published or derived figure with its own provenance.
    if m.tokens_per_s_per_user is not None:
        assert "tokens_per_s_per_user" in m.meta
    assert m.output_tokens_per_s_per_gpu > 0
    assert presets.entry_notes("measurement")[key].strip(), f"{key}: the entry note says what the setup assumes"


def test_published_figures_convert_to_output_per_gpu():
    # DeepSeek day 6: "~14.8k tokens/s output during decoding" per H800 node of 8 → 1,850 per GPU.
    assert ITEMS["deepseek-h800-production"].output_tokens_per_s_per_gpu == pytest.approx(14_800 / 8)
    # LMSYS decode table: 22,282 tokens/s per node of 8 H100 → 2,785.25 per GPU.
    assert ITEMS["sglang-deepseek-h100-decode"].output_tokens_per_s_per_gpu == pytest.approx(22_282 / 8)
    # TensorRT-LLM perf overview reports the whole TP group: Llama 3.3 70B FP8, H100 TP2, 1000/1000 = 4,205.
    m = ITEMS["trtllm-llama-3.3-70b-h100-tp2-1000-1000"]
    assert (m.throughput, m.gpus, m.throughput_metric) == (4205, 2, "output per group")
    assert m.output_tokens_per_s_per_gpu == pytest.approx(2102.5)
    # InferenceX counts input + output over every GPU: 14,659.4 total at 1k/1k is 7,329.7 output per GPU.
    m = ITEMS["inferencex-dsr1-fp4-gb200-c16130"]
    assert m.throughput_metric == "total per GPU" and m.gpus == 12 + 20 and m.prefill_gpus == 12
    assert m.output_tokens_per_s_per_gpu == pytest.approx(14_659.4 / 2)
    # gpt-oss-120b 8k/1k on B200: total × 1024 / (8192 + 1024) = 1/9 of it.
    assert ITEMS["inferencex-gptoss-b200-8k-1k"].output_tokens_per_s_per_gpu == pytest.approx(61_612.7 / 9)
    # Already per GPU: as published.
    assert ITEMS["sglang-deepseek-gb200-nvfp4"].output_tokens_per_s_per_gpu == 13_386


def test_conversions_are_consistent_with_concurrency_where_both_are_published():
    # Output per GPU can be at most concurrency × speed / GPUs (every sequence decoding all the time).
    # This is what pins the metrics: read the other way (output, or per GPU), these would break it by
    # factors of 2 to 9. 2 % is left for rounding in the sources (RTP-LLM: "1,850", "13,200", "20 TPS").
    checked = 0
    for key, m in ITEMS.items():
        if m.concurrency is None or m.tokens_per_s_per_user is None:
            continue
        cap = m.concurrency * m.tokens_per_s_per_user / m.gpus
        assert m.output_tokens_per_s_per_gpu <= cap * 1.02, key
        # The other reading: a "total" figure taken as output; a per-node or per-group one taken as per GPU.
        alt = {"total per GPU": m.throughput, "total per group": m.throughput / m.gpus,
               "output per node": m.throughput, "output per group": m.throughput}.get(m.throughput_metric)
        if alt is not None:
            assert alt > cap * 1.02, f"{key}: the other reading of the metric would fit as well"
            checked += 1
    assert checked >= 15
    # RTP-LLM: 13,200 concurrent at the 20 tok/s SLA over 144 GPUs = 1,833 ≈ the published 1,850 per GPU.
    m = ITEMS["rtp-llm-deepseek-h800"]
    assert m.concurrency * m.tokens_per_s_per_user / m.gpus == pytest.approx(1850, rel=0.02)


def test_decode_context_is_the_published_kv_length_or_l_plus_half_o():
    assert ITEMS["deepseek-h800-production"].decode_context == 4989
    m = ITEMS["trtllm-llama-3.1-8b-h100-tp1-5000-500"]
    assert m.context_tokens is None and m.decode_context == 5000 + 500 / 2


def test_mtp_and_cache_hits_are_recorded_in_the_setup():
    ds = ITEMS["deepseek-h800-production"]
    assert ds.tokens_computed_per_step == 2 and 1 < ds.tokens_per_step <= 2
    assert ds.cache_hit_rate == pytest.approx(342 / 608, abs=1e-3)       # 342B of 608B input tokens hit
    assert "tokens_per_step" in presets.uncertain_fields(ds)
    ix = ITEMS["inferencex-dsr1-fp4-b200-c10860"]
    assert ix.tokens_per_step == ix.tokens_computed_per_step == 4 and "tokens_per_step" in presets.uncertain_fields(ix)


@pytest.mark.parametrize("key", ["deepseek-h800-production", "trtllm-qwen3-235b-b200-tp8-128-2048",
                                 "inferencex-gptoss-mi300x-1k-1k"])
def test_dump_round_trips(key):
    back = parse_text(dump_item(ITEMS[key], "measurement", key), "measurement")[key]
    assert back == ITEMS[key]


GOOD = """
schema: roofline-presets/1
kind: measurement
items:
  mine:
    name: my run
    source: my notebook
    date: "2026-01"
    model: llama-3.1-8b
    hardware: h100
    publisher: me
    weights: bf16
    kv: bf16
    compute: bf16
    scope: decode
    gpus: 2
    chips_per_replica: 2
    input_tokens: 1000
    output_tokens: 100
    throughput: 5000
    throughput_metric: output per group
"""


def test_a_user_measurement_loads():
    m = parse_text(GOOD, "measurement")["mine"]
    assert isinstance(m, Measurement) and m.output_tokens_per_s_per_gpu == 2500
    assert m.meta["throughput"].source == "my notebook" and m.tokens_per_s_per_user is None


@pytest.mark.parametrize("text, needle", [
    (GOOD.replace("    chips_per_replica: 2\n", "    chips_per_replica: 4\n"), "chips_per_replica"),
    (GOOD + "    tokens_per_step: 2\n", "tokens_per_step"),                # accepted > computed (1)
    (GOOD.replace("output per group", "per fortnight"), "throughput_metric"),
    (GOOD.replace("scope: decode", "scope: vibes"), "scope"),
    (GOOD.replace("    throughput: 5000\n", ""), "missing field"),
    (GOOD.replace("    input_tokens: 1000\n", ""), "missing field"),
    (GOOD.replace("throughput: 5000", "throughput: -5"), "throughput"),
    (GOOD + "    cache_hit_rate: 1.5\n", "cache_hit_rate"),
    (GOOD.replace("    source: my notebook\n", ""), "no source"),
])
def test_bad_measurements_name_the_problem(text, needle):
    with pytest.raises(PresetError, match=needle):
        parse_text(text, "measurement")


def test_every_metric_name_is_handled():
    base = parse_text(GOOD, "measurement")["mine"]
    got = {k: base.with_(throughput_metric=k).output_tokens_per_s_per_gpu for k in THROUGHPUT_METRICS}
    o = 100 / 1100                                            # O / (L + O)
    assert got == pytest.approx({"output per GPU": 5000, "output per node": 5000 / 8, "output per group": 2500,
                                 "total per GPU": 5000 * o, "total per group": 2500 * o})
