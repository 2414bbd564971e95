"""The metric grid's HTML: a long word carries its length for the stylesheet's shrink-to-fit rule, and the
grid reads back (`parse`) exactly as written, with or without it."""

from __future__ import annotations

from ui.elements import metrics
from ui.elements.metrics import Metric


def test_a_long_word_carries_its_length_and_short_values_carry_nothing():
    body = metrics.html_of([Metric("Mode", "disaggregated"), Metric("TTFT", "926 ms"),
                            Metric("$ per request", "$0.000111")])
    assert '>disaggregated<' in body and 'style="--rf-w: 13"' in body        # len("disaggregated") = 13
    assert 'style="--rf-w: 9"' in body                                       # len("$0.000111") = 9
    assert body.count("--rf-w") == 2                                         # "926 ms": words of 3 and 2


def test_the_threshold_is_the_longest_word_not_the_whole_value():
    assert metrics._fit_style("fp4 / fp8") == ""                             # 9 characters, none a long word
    assert metrics._fit_style("1234567") == ""                               # 7 < FIT_FROM = 8
    assert metrics._fit_style("12345678") == ' style="--rf-w: 8"'
    assert metrics._fit_style("") == ""


def test_parse_reads_back_every_card_with_or_without_the_fit_style():
    items = [Metric("Mode", "disaggregated", help="serving mode"), Metric("Batch", "2,534"),
             Metric("Cost", "$0.000111", delta="−3 %", delta_color="inverse")]
    assert metrics.parse(metrics.html_of(items)) == items
