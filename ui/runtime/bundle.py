"""Streamlit's own frontend bundle (`/static/js/…`, `/static/css/…`) served gzipped, each file compressed once per
process.

Why: Streamlit 1.67 serves its bundle uncompressed on purpose (`SelectiveGZipMiddleware` bypasses `/static/`):
its gzip layer would compress every response again, and it counts on a reverse proxy or CDN to compress.  A
first visit to this app then moves ≈5.1 MB of Streamlit's JavaScript through the Python process, and when a
lecture hall's phones open the link at once, that queue, not the app's runs, sets how long they wait
(docs/performance.md, "Burst").  Compressed once and kept in memory, the bundle a first visit loads is
≈2.0 MB on the wire, fonts (already compressed) included, and costs no compression per request
(`python bench/bench_burst.py --first-load`).

What is answered here (through `ui/runtime/assets.respond`, which `streamlit_internals.serve_http_first` asks
before Streamlit's routes): a GET or HEAD of a regular `.js`, `.css`, `.json` or `.svg` file of at least
`MIN_BYTES` under Streamlit's static folder, without a `Range` header, from a client that accepts gzip.  The
reply carries the headers Streamlit's static route gives that file (its content type and Streamlit's one-year
`immutable` Cache-Control: the names are content-hashed), plus `Content-Encoding: gzip`, `Vary:
Accept-Encoding` and a strong ETag (a matching `If-None-Match` gets 304).  Everything else — the root
document, fonts and images, ranges, clients without gzip, a path that is not a plain file inside the folder —
goes on to Streamlit's route unchanged.  The first request for a file compresses it in a worker of a small
pool (≈15 ms for the largest, once); requests that arrive meanwhile wait for the same result.
"""

from __future__ import annotations

import asyncio
import re
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from ui.runtime import assets, streamlit_internals

ROUTE = "/static/"
TYPES = frozenset({".js", ".css", ".json", ".svg"})     # text that compresses; fonts and images already are
MIN_BYTES = 500                                          # as Streamlit's gzip layer: smaller files gain nothing
MAX_BYTES = 64 << 20                                     # never read a stray large file into memory
_SAFE = re.compile(r"/static/[A-Za-z0-9_][A-Za-z0-9._/-]*")

_lock = threading.Lock()
_bodies: dict[str, Future] = {}                          # request path → Future[Body | None]
_root: Path | None = None                               # tests: a folder of their own
_streamlit_static: tuple[Path, int] | None = None


def _streamlit() -> tuple[Path, int]:
    """(Streamlit's static folder, the max-age of its bundle files), looked up once."""
    global _streamlit_static
    if _streamlit_static is None:
        _streamlit_static = streamlit_internals.static_bundle()
    return _streamlit_static


def cache_control() -> str:
    """The Cache-Control Streamlit's static route gives a hashed bundle file."""
    return f"public, immutable, max-age={_streamlit()[1]}"


def static_root() -> Path:
    """Streamlit's static folder (the one holding index.html and `static/`), resolved."""
    return _root or _streamlit()[0]


def file_for(path: str, root: Path | None = None) -> Path | None:
    """The file a request path (`/static/js/index.ab12.js`, base URL already removed) names, when it is one this
    module serves; None otherwise."""
    if not _SAFE.fullmatch(path) or ".." in path or "//" in path:
        return None
    root = root or static_root()
    f = (root / path.lstrip("/")).resolve()
    if f.suffix.lower() not in TYPES or not f.is_relative_to(root / "static"):
        return None
    try:
        size = f.stat().st_size if f.is_file() else -1
    except OSError:
        return None
    return f if MIN_BYTES <= size <= MAX_BYTES else None


def _compress(f: Path, fut: Future) -> None:
    try:
        raw = f.read_bytes()
        fut.set_result(assets.body_of(f.name, raw))
    except Exception as exc:              # the route serves it instead
        print(f"roofline: {f.name} left to Streamlit's static route ({type(exc).__name__}: {exc})", file=sys.stderr)
        fut.set_result(None)


_pool: ThreadPoolExecutor | None = None


def body_future(path: str) -> Future | None:
    """The compressed body of the file a request path names, computed once per process by a worker of one small
    pool (a first visit's few dozen files start no thread each on the event loop); None when it is no file this
    module serves.  The file is looked up on the first request for its path only."""
    global _pool
    with _lock:
        fut = _bodies.get(path)
    if fut is not None:
        return fut
    f = file_for(path)
    if f is None:
        return None
    with _lock:
        if path in _bodies:                   # another request got here first
            return _bodies[path]
        fut = _bodies[path] = Future()
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="roofline-bundle")
    _pool.submit(_compress, f, fut)
    return fut


async def answer(scope: dict) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
    """(status, headers, body) for a bundle file this module serves; None leaves the request to Streamlit."""
    if scope.get("method") not in ("GET", "HEAD"):
        return None
    req = assets.request_headers(scope)
    if "range" in req or not assets.accepts_gzip(req.get("accept-encoding")):
        return None
    path = assets.request_path(scope)
    if not path.startswith(ROUTE):
        return None
    fut = body_future(path)
    body = None if fut is None else await asyncio.wrap_future(fut)
    if body is None:
        return None
    return assets.reply(scope, req, body, cache_control())


def cached() -> dict[str, int]:
    """Request path → compressed bytes, for every bundle file compressed so far (tests)."""
    with _lock:
        futs = dict(_bodies)
    return {k: len(f.result().gz) for k, f in futs.items() if f.done() and f.result() is not None}
