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


def test_usd_prints_small_amounts_without_an_exponent():
    from ui.format import usd
    assert usd(8.7e-05) == "$0.0000870" and usd(1.234e-6) == "$0.00000123"      # 3 significant digits
    assert usd(0.000111) == "$0.000111" and usd(0.0492) == "$0.0492" and usd(2.8) == "$2.80" and usd(0) == "$0"
