"""ui/runtime/bundle.py: Streamlit's own bundle files answered gzipped from one compression per process, with
Streamlit's Cache-Control and a strong ETag; every request it should not answer is left to Streamlit's route
(tests/deploy/test_assets.py: the same on a started server)."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from ui.runtime import assets, bundle

JS = "export const a = 1;\n" * 400          # 8,000 bytes, compressible like a bundle chunk


@pytest.fixture
def static(tmp_path, monkeypatch):
    """A static folder like Streamlit's: index.html and static/{js,css,media}/."""
    (tmp_path / "static" / "js").mkdir(parents=True)
    (tmp_path / "static" / "css").mkdir()
    (tmp_path / "static" / "media").mkdir()
    (tmp_path / "index.html").write_text("<html>" + "x" * 1000 + "</html>")
    (tmp_path / "static" / "js" / "index.Ab12.js").write_text(JS)
    (tmp_path / "static" / "js" / "tiny.Cd34.js").write_text("export {};\n")           # under MIN_BYTES
    (tmp_path / "static" / "css" / "index.Ef56.css").write_text("body { margin: 0; }\n" * 100)
    (tmp_path / "static" / "media" / "font.woff2").write_bytes(b"\0" * 4000)
    monkeypatch.setattr(bundle, "_root", tmp_path.resolve())
    monkeypatch.setattr(bundle, "_bodies", {})
    return tmp_path


def scope(path: str, method: str = "GET", **headers: str) -> dict:
    return {"type": "http", "method": method, "path": path, "root_path": "",
            "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}


def answer(sc: dict):
    return asyncio.run(bundle.answer(sc))


def head(headers) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in headers}


def test_a_bundle_file_is_served_gzipped_with_streamlits_cache_control(static):
    status, headers, body = answer(scope("/static/js/index.Ab12.js", accept_encoding="gzip, deflate, br"))
    h = head(headers)
    assert status == 200 and gzip.decompress(body) == JS.encode()
    assert len(body) < len(JS) / 10                       # 400 identical lines: far below a tenth
    assert h["content-encoding"] == "gzip" and h["vary"] == "Accept-Encoding"
    assert h["content-length"] == str(len(body)) and h["content-type"].startswith("text/javascript")
    assert h["cache-control"] == "public, immutable, max-age=31536000"      # Streamlit's: 365 × 24 × 3600 s
    assert h["etag"].startswith('"') and h["etag"].endswith('-gz"')
    css = answer(scope("/static/css/index.Ef56.css", accept_encoding="gzip"))
    assert css[0] == 200 and head(css[1])["content-type"].startswith("text/css")


def test_each_file_is_compressed_once(static, monkeypatch):
    calls = []
    real = assets.body_of
    monkeypatch.setattr(assets, "body_of", lambda name, raw: calls.append(name) or real(name, raw))
    for _ in range(3):
        assert answer(scope("/static/js/index.Ab12.js", accept_encoding="gzip"))[0] == 200
    assert calls == ["index.Ab12.js"]
    assert bundle.cached() == {"/static/js/index.Ab12.js": len(
        answer(scope("/static/js/index.Ab12.js", accept_encoding="gzip"))[2])}


def test_a_conditional_request_gets_304_and_head_gets_no_body(static):
    _, headers, _ = answer(scope("/static/js/index.Ab12.js", accept_encoding="gzip"))
    tag = head(headers)["etag"]
    status, headers, body = answer(scope("/static/js/index.Ab12.js", accept_encoding="gzip", if_none_match=tag))
    assert status == 304 and body == b"" and head(headers)["etag"] == tag
    status, headers, body = answer(scope("/static/js/index.Ab12.js", "HEAD", accept_encoding="gzip"))
    assert status == 200 and body == b"" and int(head(headers)["content-length"]) > 0


@pytest.mark.parametrize("path, method, headers", [
    ("/static/js/index.Ab12.js", "GET", {}),                                      # no gzip accepted
    ("/static/js/index.Ab12.js", "GET", {"accept_encoding": "gzip;q=0"}),
    ("/static/js/index.Ab12.js", "GET", {"accept_encoding": "gzip", "range": "bytes=0-99"}),
    ("/static/js/index.Ab12.js", "POST", {"accept_encoding": "gzip"}),
    ("/static/js/tiny.Cd34.js", "GET", {"accept_encoding": "gzip"}),              # too small to gain
    ("/static/media/font.woff2", "GET", {"accept_encoding": "gzip"}),             # already compressed
    ("/static/js/missing.js", "GET", {"accept_encoding": "gzip"}),
    ("/static/js", "GET", {"accept_encoding": "gzip"}),                           # a folder
    ("/", "GET", {"accept_encoding": "gzip"}),                                    # the root document
    ("/index.html", "GET", {"accept_encoding": "gzip"}),
    ("/static/../index.html", "GET", {"accept_encoding": "gzip"}),                # out of the folder
    ("/static//etc/passwd.js", "GET", {"accept_encoding": "gzip"}),
    ("/static/js/%2e%2e/x.js", "GET", {"accept_encoding": "gzip"}),
])
def test_everything_else_is_left_to_streamlit(static, path, method, headers):
    assert answer(scope(path, method, **headers)) is None


def test_a_symlink_out_of_the_folder_is_left_to_streamlit(static, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.js"
    outside.write_text(JS)
    (static / "static" / "js" / "link.js").symlink_to(outside)
    assert answer(scope("/static/js/link.js", accept_encoding="gzip")) is None


def test_a_file_that_cannot_be_read_is_left_to_streamlit(static, monkeypatch, capsys):
    def fail(self):
        raise PermissionError("denied")

    monkeypatch.setattr(type(static), "read_bytes", fail)
    assert answer(scope("/static/js/index.Ab12.js", accept_encoding="gzip")) is None
    assert "left to Streamlit's static route" in capsys.readouterr().err


def test_the_base_url_is_taken_off(static, monkeypatch):
    import streamlit as st

    real = st.get_option
    monkeypatch.setattr(st, "get_option", lambda k: "talk" if k == "server.baseUrlPath" else real(k))
    assert answer(scope("/talk/static/js/index.Ab12.js", accept_encoding="gzip"))[0] == 200


def test_assets_respond_hands_bundle_requests_on(static):
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    assert asyncio.run(assets.respond(scope("/static/js/index.Ab12.js", accept_encoding="gzip"), receive, send))
    assert sent[0]["status"] == 200 and gzip.decompress(sent[1]["body"]) == JS.encode()
    sent.clear()
    assert not asyncio.run(assets.respond(scope("/static/js/index.Ab12.js"), receive, send)) and not sent


def test_streamlits_static_folder_and_bundle_lifetime_are_where_bundle_looks():
    """Fails when Streamlit moves them (ui/runtime/streamlit_internals.static_bundle)."""
    from ui.runtime import streamlit_internals

    root, age = streamlit_internals.static_bundle()
    assert (root / "index.html").is_file() and any((root / "static" / "js").glob("index.*.js"))
    assert age == 365 * 24 * 60 * 60


def test_roofline_assets_off_leaves_everything_to_streamlit(monkeypatch, capsys):
    from ui.runtime import streamlit_internals

    monkeypatch.setattr(assets, "_serving", None)
    monkeypatch.setenv(assets.OFF_ENV, "off")
    monkeypatch.setattr(streamlit_internals, "serve_http_first", lambda handler: pytest.fail("installed"))
    assert assets.install() is False
    assert "ROOFLINE_ASSETS=off" in capsys.readouterr().err
