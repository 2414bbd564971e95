"""ui/runtime/assets.py: the components' files compressed once, under content-hashed names, with
validators; answered before Streamlit's gzip layer (streamlit_internals.serve_http_first), and left to
Streamlit's route whenever they cannot be (tests/deploy/test_assets.py: the same on a started server)."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import re

import pytest

from ui.runtime import assets, streamlit_internals

LIB = "var lib = 1;\n" * 2000                    # compressible, like plotly.min.js
ENTRY = ('const A = new URL("../t.{c}lib/lib.min.js", import.meta.url).href;\n'
         'const B = "../t.{c}lib/lib.min.js.map";\nexport default function () {{}}\n')


def scope(path: str, method: str = "GET", **headers: str) -> dict:
    return {"type": "http", "method": method, "path": assets.ROUTE.rstrip("/") + "/" + path, "root_path": "",
            "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}


def answer(sc: dict):
    return asyncio.run(assets.answer(sc))


def published(tmp_path, name: str) -> tuple[str, str]:
    """Publish an entry and the library it loads under components t.<name> / t.<name>lib; the entry's
    and the library's request paths once built."""
    lib_dir, entry_dir = tmp_path / "lib", tmp_path / "entry"
    lib_dir.mkdir()
    entry_dir.mkdir()
    (lib_dir / "lib.min.js").write_text(LIB)
    (entry_dir / "index.js").write_text(ENTRY.format(c=name))
    assert assets.publish((f"t.{name}", entry_dir, "index.js"), [(f"t.{name}lib", lib_dir, "lib.min.js")])
    status, _, body = answer(scope(f"t.{name}/index.js"))          # waits for the build
    assert status == 200
    lib = re.search(r'"\.\./(t\.\w+lib/lib\.min\.[0-9a-f]+\.js)"', body.decode()).group(1)
    return f"t.{name}/index.js", lib


def head(headers) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in headers}


def test_a_library_is_served_gzipped_once_under_its_content_hash_for_a_year(tmp_path):
    _, lib = published(tmp_path, "a")
    digest = hashlib.sha256(LIB.encode()).hexdigest()[:assets.HASH_CHARS]
    assert lib == f"t.alib/lib.min.{digest}.js"
    status, h, body = answer(scope(lib, accept_encoding="gzip, deflate, br"))
    h = head(h)
    assert status == 200
    assert h["content-encoding"] == "gzip" and gzip.decompress(body).decode() == LIB
    assert h["cache-control"] == "public, max-age=31536000, immutable"
    assert h["etag"] == f'"{digest}-gz"' and h["vary"] == "Accept-Encoding"
    assert h["content-length"] == str(len(body)) and h["content-type"].startswith("text/javascript")
    # The same bytes again: compressed once, not per request.
    assert answer(scope(lib, accept_encoding="gzip"))[2] is body


def test_the_entry_names_the_hashed_library_and_is_revalidated(tmp_path):
    entry, lib = published(tmp_path, "b")
    status, h, body = answer(scope(entry, accept_encoding="gzip"))
    text = gzip.decompress(body).decode()
    assert f'"../{lib}"' in text
    assert '"../t.blib/lib.min.js.map"' in text                   # only the exact quoted URL is renamed
    assert head(h)["cache-control"] == "no-cache"
    assert head(h)["etag"] == f'"{hashlib.sha256(text.encode()).hexdigest()[:assets.HASH_CHARS]}-gz"'
    # The plain name of the library stays served, revalidated.
    status, h, _ = answer(scope("t.blib/lib.min.js", accept_encoding="gzip"))
    assert status == 200 and head(h)["cache-control"] == "no-cache"


def test_a_conditional_request_gets_304_without_a_body(tmp_path):
    entry, lib = published(tmp_path, "c")
    for path in (entry, lib):
        _, h, _ = answer(scope(path, accept_encoding="gzip"))
        tag = head(h)["etag"]
        status, h2, body = answer(scope(path, accept_encoding="gzip", if_none_match=f'"other", {tag}'))
        assert (status, body) == (304, b"")
        assert head(h2)["etag"] == tag and "content-length" not in head(h2)
        assert answer(scope(path, accept_encoding="gzip", if_none_match='"other"'))[0] == 200


def test_without_gzip_the_bytes_come_uncompressed_with_their_own_tag(tmp_path):
    _, lib = published(tmp_path, "d")
    for accept in (None, "identity", "gzip;q=0", "br"):
        sc = scope(lib) if accept is None else scope(lib, accept_encoding=accept)
        status, h, body = answer(sc)
        assert status == 200 and body == LIB.encode() and "content-encoding" not in head(h)
        assert not head(h)["etag"].endswith('-gz"')


def test_head_and_other_requests(tmp_path):
    entry, lib = published(tmp_path, "e")
    status, h, body = answer(scope(lib, "HEAD", accept_encoding="gzip"))
    assert status == 200 and body == b"" and int(head(h)["content-length"]) > 0
    assert answer(scope(lib, "POST")) is None
    assert answer(scope("t.e/other.js")) is None                  # not published: Streamlit's route
    assert answer({**scope(lib), "path": "/app/static/x.js"}) is None


def test_a_file_that_cannot_be_read_is_left_to_streamlit(tmp_path, capsys):
    folder = tmp_path / "gone"
    folder.mkdir()
    (folder / "index.js").write_text('import "../t.glib/missing.js";\n')
    assets.publish(("t.g", folder, "index.js"), [("t.glib", folder, "missing.js")])
    status, _, body = answer(scope("t.g/index.js", accept_encoding="gzip"))
    assert status == 200 and gzip.decompress(body).decode() == 'import "../t.glib/missing.js";\n'
    assert answer(scope("t.glib/missing.js")) is None
    assert "left to Streamlit's route" in capsys.readouterr().err


@pytest.mark.parametrize(("header", "ok"), [("gzip", True), ("gzip, deflate, br, zstd", True), ("*", True),
                                            ("br;q=1.0, gzip;q=0.8", True), ("gzip;q=0", False),
                                            ("deflate", False), ("", False), (None, False)])
def test_accepts_gzip(header, ok):
    assert assets.accepts_gzip(header) is ok


# ---------------------------------------------------------------- before Streamlit's gzip layer

def test_serve_http_first_answers_before_streamlits_gzip_layer_and_passes_the_rest_on(tmp_path):
    from streamlit.web.server.starlette.starlette_gzip_middleware import SelectiveGZipMiddleware

    _, lib = published(tmp_path, "h")
    inner_paths = []

    async def inner(sc, receive, send):            # Streamlit's routes, as far as this test goes
        inner_paths.append(sc["path"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"streamlit"})

    async def call(path: str) -> list[dict]:
        sent = []

        async def send(msg):
            sent.append(msg)

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        mw = SelectiveGZipMiddleware(inner)
        await mw({**scope(lib, accept_encoding="gzip"), "path": path}, receive, send)
        return sent

    sent = asyncio.run(call(assets.ROUTE + lib))
    assert sent[0]["status"] == 200 and (b"content-encoding", b"gzip") in sent[0]["headers"]
    assert inner_paths == []
    sent = asyncio.run(call("/_stcore/health"))
    assert sent[-1]["body"] == b"streamlit" and inner_paths == ["/_stcore/health"]


def test_a_handler_that_fails_leaves_the_request_to_streamlit(tmp_path, monkeypatch, capsys):
    _, lib = published(tmp_path, "i")

    async def broken(sc):
        raise RuntimeError("boom")

    monkeypatch.setattr(assets, "answer", broken)
    sent = []

    async def send(msg):
        sent.append(msg)

    assert asyncio.run(assets.respond(scope(lib), None, send)) is False
    assert sent == [] and "boom" in capsys.readouterr().err


def test_serve_http_first_keeps_one_layer_when_called_again():
    from streamlit.web.server.starlette.starlette_gzip_middleware import SelectiveGZipMiddleware

    assert streamlit_internals.serve_http_first(assets.respond)
    first = SelectiveGZipMiddleware.__call__
    assert streamlit_internals.serve_http_first(assets.respond)
    assert getattr(SelectiveGZipMiddleware.__call__, streamlit_internals._STOCK) is getattr(
        first, streamlit_internals._STOCK)


def test_cors_origin_follows_streamlits_settings():
    assert streamlit_internals.cors_origin(None) in ("*", None)
    assert streamlit_internals.cors_origin("https://evil.example") in ("*", None)
