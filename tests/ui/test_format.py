"""ui/format.py: numbers as the pages print them."""

from ui.format import duration


def test_duration_words():
    # 300 s = 5 min; 3 × 86,400 s = 3 days; 0.02 s = 20 ms.
    assert duration(300) == "5 min" and duration(3 * 86400) == "3 days" and duration(0.02) == "20 ms"


def test_short_names_drop_the_vendor_and_the_parenthesis():
    from ui.format import short_name
    assert short_name("NVIDIA GB200 NVL72 (per Blackwell GPU)") == "GB200 NVL72"
    assert short_name("Google Cloud TPU v6e (Trillium)") == "TPU v6e"
    assert short_name("Llama 4 Maverick (17B-128E)") == "Llama 4 Maverick"
    assert short_name("NVIDIA H100 SXM5 80GB", terse=True) == "H100"
    assert short_name("AMD Instinct MI300X", terse=True) == "MI300X"
