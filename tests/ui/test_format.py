"""ui/format.py: numbers as the pages print them."""

from ui.format import duration


def test_duration_words():
    # 300 s = 5 min; 3 × 86,400 s = 3 days; 0.02 s = 20 ms.
    assert duration(300) == "5 min" and duration(3 * 86400) == "3 days" and duration(0.02) == "20 ms"
