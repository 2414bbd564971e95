"""Every preset loads, every number has a source and a date, and the schema rejects bad files."""

from dataclasses import fields

import pytest

from model import KVLayout, presets
from model.presets import PresetError, dump_item, parse_text

KINDS = ("hardware", "model", "price", "tier", "measurement")


@pytest.mark.parametrize("kind", KINDS)
def test_every_preset_loads_with_sources(kind):
    items = presets.load(kind)
    assert items
    for key, spec in items.items():
        defaults = {f.name: f.default for f in fields(spec)}
        numbers = [f for f, v in spec.to_dict().items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and v != defaults[f]]
        for f in numbers:
            m = spec.meta.get(f)
            assert m is not None and m.source.strip() and m.date.strip(), f"{kind} {key}.{f} has no source/date"
            if m.uncertain:
                assert m.note.strip() or m.source.strip(), f"{kind} {key}.{f} uncertain without a note"


def test_required_presets_exist():
    hw = presets.hardware_presets()
    for k in ("a100", "h100", "h200", "b200", "gb200", "gb300", "vera-rubin", "tpu-v5e", "tpu-v5p", "tpu-v6e",
              "ironwood", "mi300x", "mi325x", "mi355x", "lecture-gpu"):
        assert k in hw, k
    md = presets.model_presets()
    for k in ("deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b", "gpt-oss-20b",
              "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x7b", "mixtral-8x22b", "llama-4-scout",
              "llama-4-maverick", "glm-4.5", "lecture-deepseek"):
        assert k in md, k


def test_announced_hardware_is_flagged():
    hw = presets.hardware_presets()
    assert hw["vera-rubin"].status == "announced"
    assert presets.uncertain_fields(hw["vera-rubin"])


def test_chip_figures_against_datasheets():
    hw = presets.hardware_presets()
    # H100 SXM: 989 TFLOP/s bf16 dense, 3.35 TB/s → ≈ 295 FLOP/byte (scaling book).
    assert hw["h100"].flops_bf16_per_s / hw["h100"].hbm_bandwidth_bytes_per_s == pytest.approx(295, abs=1)
    # B200: 2.25 PF / 8 TB/s ≈ 281.
    assert hw["b200"].flops_bf16_per_s / hw["b200"].hbm_bandwidth_bytes_per_s == pytest.approx(281, abs=1)
    # GB200 NVL72: 72 GPUs in one NVLink domain; a chip is never a rack.
    assert hw["gb200"].scaleup_domain_chips == 72 and hw["gb200"].hbm_bytes < 300e9
    # The lecture's round chip: 300 FLOP/byte at bf16, 600 at fp8.
    lg = hw["lecture-gpu"]
    assert lg.flops_bf16_per_s / lg.hbm_bandwidth_bytes_per_s == pytest.approx(300)
    assert lg.flops_fp8_per_s / lg.hbm_bandwidth_bytes_per_s == pytest.approx(600)


@pytest.mark.parametrize("key,expect", [
    ("deepseek-v3", 70_272),      # 61 · (512 + 64) · 2 B (MLA)
    ("kimi-k2", 70_272),          # DeepSeek-V3 MLA layout
    ("llama-3.1-70b", 327_680),   # 2 · 80 · 8 · 128 · 2 B
    ("llama-3.1-8b", 131_072),    # 2 · 32 · 8 · 128 · 2 B
    ("llama-3.1-405b", 516_096),  # 2 · 126 · 8 · 128 · 2 B
    ("qwen3-235b-a22b", 192_512), # 2 · 94 · 4 · 128 · 2 B
    ("glm-4.5", 376_832),         # 2 · 92 · 8 · 128 · 2 B
    ("gpt-oss-120b", 73_728),     # 2 · 36 · 8 · 64 · 2 B while within the 128-token window
])
def test_kv_bytes_per_token_of_presets(key, expect):
    assert KVLayout.from_model(presets.get("model", key), 2.0).bytes_per_token == expect


def test_lecture_deepseek_is_sparsity_8():
    m = presets.get("model", "lecture-deepseek")
    assert m.total_params == 700e9 and m.sparsity == pytest.approx(8)


def test_unknown_preset_lists_choices():
    with pytest.raises(ValueError, match=r"unknown hardware preset 'h1000'.*h100"):
        presets.get("hardware", "h1000")


def test_aliases():
    assert presets.get("hardware", "TPU7x") is presets.get("hardware", "ironwood")


def test_dump_round_trips():
    for kind in KINDS:
        for key, spec in presets.load(kind).items():
            back = parse_text(dump_item(spec, kind, key), kind)[key]
            assert back == spec


GOOD = """
schema: roofline-presets/1
kind: hardware
items:
  mine:
    source: my datasheet
    date: "2026-01"
    flops_bf16_per_s: 1e15
    hbm_bytes: 100e9
    hbm_bandwidth_bytes_per_s: 4e12
    price_usd_per_hour: 3
"""


def test_user_file_loads():
    hw = parse_text(GOOD, "hardware")["mine"]
    assert hw.flops_bf16_per_s == 1e15 and hw.meta["hbm_bytes"].source == "my datasheet"


@pytest.mark.parametrize("text,needle", [
    (GOOD.replace("1e15", "-1e15"), "flops_bf16_per_s"),
    (GOOD.replace("1e15", ".nan"), "flops_bf16_per_s"),
    (GOOD.replace("1e15", '"lots"'), "not a number"),
    (GOOD.replace("    price_usd_per_hour: 3\n", ""), "missing field"),
    (GOOD + "    colour: red\n", "unknown field 'colour'"),
    (GOOD.replace("    source: my datasheet\n", ""), "no source"),
    (GOOD.replace("kind: hardware", "kind: toaster"), "'kind'"),
    ("{{{{ not yaml", "not valid YAML"),
    ("- just\n- a list\n", "expected a mapping"),
    ("a: &a [*a, *a]\nb: !!python/object:os.system {}\n", "not valid YAML"),
])
def test_bad_files_name_the_problem(text, needle):
    with pytest.raises(PresetError, match=needle):
        parse_text(text, "hardware")


def test_a_reader_error_is_one_line():
    """A NUL byte: PyYAML's ReaderError spells its position on a second line (found by
    tests/cli/test_fuzz.py); the CLI prints one `error:` line, so the message is folded."""
    with pytest.raises(PresetError) as e:
        parse_text("\x00", "hardware")
    (problem,) = e.value.problems
    assert "not valid YAML" in problem and "special characters" in problem and "\n" not in problem


def test_oversized_file_is_rejected():
    with pytest.raises(PresetError, match="limit"):
        parse_text(b"x" * (presets.MAX_FILE_BYTES + 1), "hardware")


def test_the_projects_own_files_may_grow_past_a_users_cap(tmp_path, monkeypatch):
    """A user's file is capped at MAX_FILE_BYTES (256 KiB); the built-in files at BUILTIN_MAX_BYTES, so the
    measurements can keep growing.  The same document, padded past 256 KiB with a comment, loads as a built-in
    file and is refused as a user's."""
    doc = (presets.PRESET_DIR / presets.FILES["tier"]).read_bytes()
    big = doc + b"\n#" + b"x" * (presets.MAX_FILE_BYTES + 1 - len(doc))
    assert presets.MAX_FILE_BYTES < len(big) < presets.BUILTIN_MAX_BYTES
    (tmp_path / presets.FILES["tier"]).write_bytes(big)
    monkeypatch.setattr(presets, "PRESET_DIR", tmp_path)
    presets._load_builtin.cache_clear()
    try:
        assert presets.load("tier").keys() == parse_text(doc, "tier").keys()
    finally:
        presets._load_builtin.cache_clear()
    with pytest.raises(PresetError, match="limit"):
        parse_text(big, "tier")


def test_moe_models_carry_a_sourced_moe_layer_count():
    # Every MoE preset names its MoE layers, sourced to the model's config.json with a date.
    for key, m in presets.model_presets().items():
        if not m.is_moe:
            continue
        assert m.n_moe_layers is not None and 1 <= m.n_moe_layers <= m.n_layers, key
        src = m.meta["n_moe_layers"]
        assert "config.json" in src.source and src.date, (key, src)
    # DeepSeek-V3 config.json: 61 layers, first_k_dense_replace 3 → 58.
    assert presets.get("model", "deepseek-v3").n_moe_layers == 58
    # Llama 4 Maverick config.json: 48 layers, interleave_moe_layer_step 2 → 24.
    assert presets.get("model", "llama-4-maverick").n_moe_layers == 24


BARE = """
schema: roofline-presets/1
kind: hardware
items:
  mine:
    flops_bf16_per_s: 1e15
    hbm_bytes: {value: 100e9, source: "my datasheet", date: "2026-01"}
    hbm_bandwidth_bytes_per_s: 4e12
    price_usd_per_hour: {value: 3, source: "my invoice"}
"""


def test_a_users_file_may_omit_sources_and_its_numbers_are_named_unsourced(tmp_path):
    # The built-in rule stays: every number needs a source and a date.
    with pytest.raises(PresetError, match="no source"):
        parse_text(BARE, "hardware")
    hw = parse_text(BARE, "hardware", require_sources=False)["mine"]
    assert hw.flops_bf16_per_s == 1e15
    # flops and bandwidth have neither; the price has a source but no date; HBM bytes has both.
    assert sorted(presets.unsourced_fields(hw)) == ["flops_bf16_per_s", "hbm_bandwidth_bytes_per_s",
                                                    "price_usd_per_hour"]
    f = tmp_path / "mine.yaml"
    f.write_text(BARE)
    assert presets.unsourced_fields(presets.load_spec("hardware", str(f))) == presets.unsourced_fields(hw)
    # Dumped and read back, the unsourced numbers stay unsourced (no invented "user" source).
    again = parse_text(presets.dump_item(hw, "hardware", "mine"), "hardware", require_sources=False)["mine"]
    assert presets.unsourced_fields(again) == presets.unsourced_fields(hw)
    # A non-text source is still an error in a user's file.
    with pytest.raises(PresetError, match="'source' must be text"):
        parse_text(BARE.replace('source: "my invoice"', "source: [1, 2]"), "hardware", require_sources=False)


def test_builtin_presets_have_no_unsourced_numbers():
    for kind in ("hardware", "model", "price", "tier", "measurement"):
        for key, spec in presets.load(kind).items():
            assert presets.unsourced_fields(spec) == [], (kind, key)
