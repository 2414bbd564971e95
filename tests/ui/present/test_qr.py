"""ui/present/qr.py: the audience QR code as drawn, read back module by module (the walkthrough page's test
compares the drawn code with the link it should carry: tests/app/test_walkthrough.py)."""

from ui.present import qr


def test_the_drawn_svg_reads_back_as_the_codes_modules():
    # svg_matrix reads segno's SVG path back; a 21 × 21 version-1 code plus a 4-module quiet zone is 29 wide
    m = qr.svg_matrix(qr.svg("A"))
    assert len(m) == len(m[0]) == 29 and m == qr.matrix("A")
    assert m[4][4:11] == [1] * 7                                    # the top-left finder pattern's first row
    assert m != qr.matrix("B")                                      # another text, another code
