"""The components' files served as Streamlit serves its own bundles: compressed once, named by content,
cached by the browser.

Why: Streamlit's component asset route (`/_stcore/bidi-components/<component>/<file>`) reads the file
and has its gzip layer compress it at level 9 on every request, and answers with `Cache-Control: public`
and no validator, so a browser cannot keep it: every full page load, first visit or not, cost the server
≈0.15 s of CPU (0.3 s when busy) and the viewer 1.6 MB (plotly.min.js, 4.8 MB → 1.5 MB, and KaTeX).
Streamlit's own /static bundles are named by their content and served `immutable` for a year (and, through
ui/runtime/bundle.py, gzipped once per process as well).

What this module does instead, for the files the app's elements publish (`publish`):

* a *library* (plotly.min.js, katex.min.js) is read, hashed (SHA-256) and gzipped once per process, and
  served under a content-hashed name (`plotly.min.<hash>.js`) with `Cache-Control: public,
  max-age=31536000, immutable`: a returning browser takes it from its cache without asking;
* an *entry* (a component's index.js: the frontend asks for it by its plain name) is served with a strong
  ETag and `Cache-Control: no-cache`: a returning browser revalidates it (304, a few hundred bytes).  Its
  text names each library it loads by the library's hashed name (the quoted `"../<component>/<file>"`
  URLs are rewritten), so a changed plotly is a new URL and never a stale cache entry;
* the plain names of libraries stay served (ETag, revalidated), for a page still holding an old entry.

Every response carries `Vary: Accept-Encoding`, a strong ETag (the gzip and identity representations
have different tags) and Streamlit's CORS header; a client that does not accept gzip gets the bytes
decompressed from the one stored copy.  Hashing and compressing run in a background thread once the
first run publishes the files (≈0.15 s of CPU, once); a request that comes first waits for it.

The requests reach this module through `streamlit_internals.serve_http_first` (Streamlit has no hook of
its own).  Where that is not possible, or a file cannot be read, nothing is rewritten and Streamlit's
route serves the plain names as before: the charts still draw, only uncached (said once on stderr).
`ROOFLINE_ASSETS=off` in the server's environment leaves everything to Streamlit's routes: the
configuration benches compare against (`ROOFLINE_ASSETS=off python bench/bench_burst.py --first-load`).
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import sys
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ui.runtime import streamlit_internals

ROUTE = "/_stcore/bidi-components/"
IMMUTABLE = "public, max-age=31536000, immutable"      # a content-hashed name: one year, never revalidated
REVALIDATE = "no-cache"                                # a plain name: stored, revalidated before each use
HASH_CHARS = 16                                        # hex digits of SHA-256 in a name and an ETag
GZIP_LEVEL = 9
OFF_ENV = "ROOFLINE_ASSETS"                            # "off": leave every asset to Streamlit's routes (benches)
TYPES = {".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".json": "application/json"}


@dataclass
class Body:
    """One file as served: gzipped once, with its strong validator."""

    gz: bytes
    size: int                  # uncompressed bytes
    digest: str                # HASH_CHARS hex digits of the SHA-256 of the uncompressed bytes
    content_type: str

    def etag(self, gzipped: bool) -> str:
        return f'"{self.digest}{"-gz" if gzipped else ""}"'


@dataclass
class Asset:
    path: str                  # "<component>/<file>" under ROUTE, as requested
    cache_control: str
    body: Future = field(default_factory=Future)          # → Body


_lock = threading.Lock()
_table: dict[str, Asset] = {}                            # request path under ROUTE → asset
_published: set[tuple[str, str]] = set()                 # (component, folder) already published
_serving: bool | None = None                             # serve_http_first installed (None: not tried)


def hashed_name(name: str, digest: str) -> str:
    """`plotly.min.js` → `plotly.min.<digest>.js`."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.{digest}.{ext}" if dot else f"{name}.{digest}"


def _content_type(name: str) -> str:
    ext = Path(name).suffix.lower()
    return TYPES.get(ext) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def body_of(name: str, raw: bytes) -> Body:
    return Body(gzip.compress(raw, compresslevel=GZIP_LEVEL, mtime=0), len(raw),
                hashlib.sha256(raw).hexdigest()[:HASH_CHARS], _content_type(name))


def _install() -> bool:
    global _serving
    if _serving is None and os.environ.get(OFF_ENV, "").lower() in ("off", "0", "no"):
        _serving = False          # benches: Streamlit's own routes, as where this layer cannot install
        print(f"roofline: assets served by Streamlit's routes ({OFF_ENV}=off)", file=sys.stderr)
    if _serving is None:
        try:
            _serving = streamlit_internals.serve_http_first(respond)
        except Exception as exc:          # a Streamlit whose internals moved: its own route serves them
            print(f"roofline: component assets served by Streamlit's route, uncached ({type(exc).__name__}: "
                  f"{exc})", file=sys.stderr)
            _serving = False
        else:
            if not _serving:
                print("roofline: component assets served by Streamlit's route, uncached (no gzip layer "
                      "to serve them before)", file=sys.stderr)
    return _serving


def install() -> bool:
    """Put this module (and ui/runtime/bundle.py, Streamlit's own bundle gzipped once) before Streamlit's routes;
    False where it cannot be.  `publish` installs it too; the app calls it on its first run, so the visitors
    after that one get the bundle compressed."""
    return _install()


def publish(entry: tuple[str, Path, str], libraries: list[tuple[str, Path, str]]) -> bool:
    """Serve `entry` (component, folder, file: a component's index.js) and the `libraries` it loads (each
    component, folder, file) as this module's docstring says: once per component and folder in a
    process, the reading, hashing and compressing in a background thread.  False when they are left to
    Streamlit's route."""
    if not _install():
        return False
    with _lock:
        new = [(c, Path(d), f) for c, d, f in (*libraries, entry) if (c, str(d)) not in _published]
        _published.update((c, str(d)) for c, d, _ in new)
        jobs = [(c, d, f, Asset(f"{c}/{f}", REVALIDATE)) for c, d, f in new]      # plain names: revalidated
        for *_, a in jobs:
            _table[a.path] = a
    if jobs:
        entry_job = next((j for j in jobs if j[:3] == (entry[0], Path(entry[1]), entry[2])), None)
        libs = [j for j in jobs if j is not entry_job]
        threading.Thread(target=_build, args=(libs, entry_job), name="roofline-assets", daemon=True).start()
    return True


_renames: dict[str, str] = {}          # '"../<component>/<file>"' → the same with the hashed name


def _build(libs: list, entry_job: tuple | None) -> None:
    """Read and hash the libraries, write the entry with their hashed names, then compress the libraries.
    A file that cannot be read leaves its path to Streamlit's route."""
    raws = []
    for comp, folder, name, asset in libs:
        try:
            raw = (folder / name).read_bytes()
        except OSError as exc:
            _drop(asset, exc)
            continue
        digest = hashlib.sha256(raw).hexdigest()[:HASH_CHARS]
        hashed = Asset(f"{comp}/{hashed_name(name, digest)}", IMMUTABLE)
        with _lock:
            _table[hashed.path] = hashed
            _renames[f'"../{comp}/{name}"'] = f'"../{hashed.path}"'
        raws.append((name, raw, asset, hashed))
    if entry_job is not None:
        comp, folder, name, asset = entry_job
        try:
            text = (folder / name).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:
            _drop(asset, exc)
        else:
            with _lock:
                renames = dict(_renames)
            for plain, hashed in renames.items():
                text = text.replace(plain, hashed)
            asset.body.set_result(body_of(name, text.encode("utf-8")))
    for name, raw, asset, hashed in raws:
        body = body_of(name, raw)
        asset.body.set_result(body)
        hashed.body.set_result(body)


def _drop(asset: Asset, exc: BaseException) -> None:
    with _lock:
        _table.pop(asset.path, None)
    asset.body.set_exception(exc)
    print(f"roofline: {asset.path} left to Streamlit's route ({type(exc).__name__}: {exc})", file=sys.stderr)


# ---------------------------------------------------------------- HTTP

def request_headers(scope: dict) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding header admits gzip (named or `*`, with a q above 0)."""
    for part in (accept_encoding or "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "x-gzip", "*"):
            q = params.strip().lower()
            if q.startswith("q="):
                try:
                    return float(q[2:]) > 0
                except ValueError:
                    return False
            return True
    return False


def etag_matches(if_none_match: str | None, body: Body) -> bool:
    if not if_none_match:
        return False
    tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return "*" in tags or bool(tags & {body.etag(True), body.etag(False)})


def request_path(scope: dict) -> str:
    """The request's path with the ASGI root path and Streamlit's base URL taken off."""
    path: str = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    import streamlit as st

    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    if base and path.startswith(f"/{base}/"):
        path = path[len(base) + 1:]
    return path


def asset_for(scope: dict) -> Asset | None:
    """The published asset a GET or HEAD request asks for, or None."""
    if scope.get("method") not in ("GET", "HEAD"):
        return None
    path = request_path(scope)
    if not path.startswith(ROUTE):
        return None
    return _table.get(path[len(ROUTE):])


async def answer(scope: dict) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
    """(status, headers, body) for a request of a published asset; None for anything else (or an asset
    that could not be built): Streamlit answers those."""
    asset = asset_for(scope)
    if asset is None:
        return None
    import asyncio

    try:
        body: Body = await asyncio.wrap_future(asset.body)
    except Exception:
        return None
    req = request_headers(scope)
    return reply(scope, req, body, asset.cache_control, cors=streamlit_internals.cors_origin(req.get("origin")))


def reply(scope: dict, req: dict[str, str], body: Body, cache_control: str, *,
          cors: str | None = None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """(status, headers, body) of one stored body: 304 when the request's validator matches, else the gzip
    bytes (or, for a client without gzip, the bytes decompressed), with `Vary: Accept-Encoding`, a strong ETag
    and the given Cache-Control (and CORS origin); no body for HEAD."""
    gz = accepts_gzip(req.get("accept-encoding"))
    headers = {"etag": body.etag(gz), "cache-control": cache_control, "vary": "Accept-Encoding"}
    if cors:
        headers["access-control-allow-origin"] = cors
    if etag_matches(req.get("if-none-match"), body):
        return 304, encode_headers(headers), b""
    data = body.gz if gz else gzip.decompress(body.gz)
    headers.update({"content-type": body.content_type, "content-length": str(len(data)),
                    "x-content-type-options": "nosniff"})
    if gz:
        headers["content-encoding"] = "gzip"
    return 200, encode_headers(headers), b"" if scope.get("method") == "HEAD" else data


def encode_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


async def respond(scope: dict, receive: Any, send: Any) -> bool:
    """The ASGI handler `serve_http_first` asks first: True when it answered the request."""
    try:
        got = await answer(scope)
        if got is None:
            from ui.runtime import bundle

            got = await bundle.answer(scope)
    except Exception as exc:            # never break a request: Streamlit's route answers it instead
        print(f"roofline: asset request left to Streamlit ({type(exc).__name__}: {exc})", file=sys.stderr)
        return False
    if got is None:
        return False
    status, headers, data = got
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
    return True


def published() -> dict[str, str]:
    """Request path under ROUTE → Cache-Control, for every asset published so far (tests, benches)."""
    with _lock:
        return {p: a.cache_control for p, a in _table.items()}
