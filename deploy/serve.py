"""Serve roofline from N Streamlit replicas behind haproxy on one machine (one replica per core).

    python deploy/serve.py                          # nproc replicas, http://0.0.0.0:8501, stats on 127.0.0.1:8404
    python deploy/serve.py --replicas 2 --port 8080
    python deploy/serve.py --print-config           # the haproxy configuration only (to run haproxy yourself)
    python deploy/serve.py -- --server.maxUploadSize 2   # arguments after -- go to every replica

A Streamlit server runs its scripts in one Python process, so it uses about one core however many
viewers it has; N replicas use N.  This script starts N replicas of app.py on consecutive ports of
127.0.0.1 (--replica-port, default 8601…), each in its own process group with the container's production
settings and one shared cookie secret, writes deploy/haproxy.cfg.in with that replica list, checks it
with `haproxy -c`, starts haproxy in front (Debian package `haproxy`), waits until haproxy reports every
replica UP, and then supervises: a replica that exits is started again (haproxy routes around it
meanwhile and takes it back once its health check passes).  Ctrl-C or SIGTERM stops haproxy, then every
replica (SIGTERM to each process group, SIGKILL after a grace period).

Also a library for tests/deploy/test_haproxy.py and bench/bench_load.py: `replicas(...)`, `balancer(...)`,
`cluster(...)` context managers, `Replica.kill()` and `Balancer.servers()` (haproxy's own view).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).resolve().with_name("haproxy.cfg.in")
HEALTH_TIMEOUT_S = 90.0
GRACE_S = 10.0              # SIGTERM → SIGKILL
CHECK_INTER = "1s"          # haproxy health-check interval (see the template: fall 2, fastinter 250ms)

# The container's production settings (Dockerfile ENV), as command-line options of every replica.
REPLICA_ARGS = ("--server.headless", "true", "--server.fileWatcherType", "none", "--server.allowRunOnSave",
                "false", "--client.toolbarMode", "viewer", "--client.showErrorDetails", "type",
                "--browser.gatherUsageStats", "false")


def haproxy_path() -> str | None:
    """The haproxy binary (PATH, else Debian's /usr/sbin), or None."""
    found = shutil.which("haproxy")
    if found:
        return found
    return "/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK) else None


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def get(url: str, timeout_s: float = 2.0) -> str | None:
    """The body of a GET, or None when nothing answers or the status is not 2xx."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return r.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError):
        return None


def stop_group(proc: subprocess.Popen | None, grace_s: float = GRACE_S) -> None:
    """SIGTERM the process group of `proc` (started with start_new_session), SIGKILL after `grace_s`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)


def tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return "(no log)"


# ---------------------------------------------------------------- replicas

@dataclass
class Replica:
    """One `streamlit run` of the app on 127.0.0.1:port, in its own process group, output to `log`."""

    name: str
    port: int
    app: Path
    cwd: Path
    log: Path
    env: dict[str, str]
    extra_args: tuple[str, ...] = ()
    proc: subprocess.Popen | None = None
    started: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "streamlit", "run", str(self.app), "--server.port", str(self.port),
               "--server.address", "127.0.0.1", *REPLICA_ARGS, *self.extra_args]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=str(self.cwd), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.env, start_new_session=True)
        self.started = time.monotonic()

    def wait_healthy(self, timeout_s: float = HEALTH_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while (get(self.url + "/_stcore/health") or "").strip() != "ok":
            if not self.alive:
                code = self.proc.returncode if self.proc else None
                raise RuntimeError(f"replica {self.name} exited with code {code} before it was healthy:\n"
                                   f"{tail(self.log)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {self.name} not healthy at {self.url} after {timeout_s:.0f} s:\n"
                                   f"{tail(self.log)}")
            time.sleep(0.1)

    def stop(self, grace_s: float = GRACE_S) -> None:
        stop_group(self.proc, grace_s)

    def kill(self) -> None:
        """SIGKILL the replica's whole process group at once: a crash, as far as haproxy can tell."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def stop_all(reps: Sequence[Replica], grace_s: float = GRACE_S) -> None:
    """SIGTERM every replica's process group at once, then wait; SIGKILL those still running after grace_s."""
    for r in reps:
        if r.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(r.proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for r in reps:
        if r.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                r.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        r.stop(grace_s=1.0)                      # SIGKILL what is left


@contextlib.contextmanager
def replicas(n: int | None = None, app: str | Path = "app.py", cwd: str | Path = ROOT,
             ports: Sequence[int] | None = None, base_port: int | None = None,
             extra_args: Sequence[str] = (), logdir: str | Path | None = None,
             timeout_s: float = HEALTH_TIMEOUT_S) -> Iterator[list[Replica]]:
    """Start `n` replicas (on `ports`, else base_port, base_port+1, …, else free ports); yield them once
    every one answers its health check; stop them all on exit.  They share one cookie secret (the
    environment's STREAMLIT_SERVER_COOKIE_SECRET if set), so an XSRF cookie set by one validates on any."""
    if ports is None:
        n = n or os.cpu_count() or 1
        ports = [base_port + i for i in range(n)] if base_port else [free_port() for _ in range(n)]
    ports = list(ports)
    cwd = Path(cwd)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    with contextlib.ExitStack() as stack:
        if logdir is None:
            logdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="roofline-replicas-"))
        logdir = Path(logdir)
        logdir.mkdir(parents=True, exist_ok=True)
        reps = [Replica(f"r{i + 1}", port, Path(app), cwd, logdir / f"r{i + 1}.log", env, tuple(extra_args))
                for i, port in enumerate(ports)]
        stack.callback(stop_all, reps)
        for r in reps:
            r.start()
        for r in reps:
            r.wait_healthy(timeout_s)
        yield reps


# ---------------------------------------------------------------- haproxy

def render_config(reps: Sequence[Replica], bind: str, stats_bind: str, inter: str = CHECK_INTER) -> str:
    """deploy/haproxy.cfg.in with the replica list: one `server` line per replica, its cookie value = its name."""
    servers = "\n".join(f"    server {r.name} 127.0.0.1:{r.port} cookie {r.name}" for r in reps)
    return string.Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        bind=bind, stats_bind=stats_bind, inter=inter, servers=servers)


def check_config(path: Path) -> None:
    """`haproxy -c`: raises RuntimeError with haproxy's own message when the configuration is invalid."""
    exe = haproxy_path()
    if exe is None:
        raise RuntimeError("haproxy not found: `apt-get install haproxy` (Debian package)")
    r = subprocess.run([exe, "-c", "-f", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"haproxy -c rejected {path}:\n{r.stdout}{r.stderr}")


@dataclass
class Balancer:
    url: str
    stats_url: str
    config: Path
    log: Path | None
    proc: subprocess.Popen = field(repr=False)

    def stats(self) -> list[dict[str, str]]:
        """haproxy's statistics CSV (one dict per frontend, backend and server); [] when it does not answer."""
        text = get(self.stats_url + ";csv;norefresh")
        if not text:
            return []
        return list(csv.DictReader(io.StringIO(text.lstrip("# "))))

    def servers(self) -> dict[str, dict[str, str]]:
        """The replicas as haproxy sees them: name → its stats row (status UP/DOWN, stot, chkfail, chkdown…)."""
        return {row["svname"]: row for row in self.stats()
                if row.get("pxname") == "replicas" and row.get("svname") not in ("FRONTEND", "BACKEND")}

    def check_settings(self) -> dict[str, float]:
        """inter, fastinter (seconds) and fall of the replicas' health checks, from the config's default-server."""
        line = next(x.split() for x in self.config.read_text().splitlines() if x.strip().startswith("default-server"))
        unit = {"ms": 1e-3, "s": 1.0, "m": 60.0}

        def secs(word: str) -> float:
            num = word.rstrip("ms")
            return float(num) * unit[word[len(num):] or "ms"]
        return {"inter": secs(line[line.index("inter") + 1]), "fastinter": secs(line[line.index("fastinter") + 1]),
                "fall": float(line[line.index("fall") + 1])}

    def detection_bound_s(self) -> float:
        """Longest a dead replica stays UP: the next check comes within `inter`, then fall − 1 more `fastinter`
        apart (a refused connection fails a check at once)."""
        c = self.check_settings()
        return c["inter"] + (c["fall"] - 1) * c["fastinter"]

    def wait_status(self, name: str, status: str, timeout_s: float = 60.0) -> dict[str, str]:
        """Poll until haproxy reports replica `name` in `status` ("UP", "DOWN"); its stats row then."""
        deadline = time.monotonic() + timeout_s
        while True:
            row = self.servers().get(name, {})
            if row.get("status", "").split(" ")[0] == status:
                return row
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited with code {self.proc.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"haproxy never reported {name} {status} within {timeout_s:.0f} s "
                                   f"(last: {row.get('status')!r})")
            time.sleep(0.05)


@contextlib.contextmanager
def balancer(reps: Sequence[Replica], port: int | None = None, host: str = "127.0.0.1",
             stats_port: int | None = None, inter: str = CHECK_INTER, workdir: str | Path | None = None,
             output: int | None = None, timeout_s: float = 60.0) -> Iterator[Balancer]:
    """haproxy in front of `reps`: config written to `workdir`, checked, started in its own process group;
    yielded once haproxy reports every replica UP; stopped on exit.  Its log goes to `output` (a file
    descriptor, e.g. sys.stdout.fileno()) or to workdir/haproxy.log."""
    exe = haproxy_path()
    if exe is None:
        raise RuntimeError("haproxy not found: `apt-get install haproxy` (Debian package)")
    port = port or free_port()
    stats_port = stats_port or free_port()
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="roofline-haproxy-"))
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        cfg = workdir / "haproxy.cfg"
        cfg.write_text(render_config(reps, f"{host}:{port}", f"127.0.0.1:{stats_port}", inter), encoding="utf-8")
        check_config(cfg)
        log = None if output is not None else workdir / "haproxy.log"
        with contextlib.ExitStack() as files:
            out = output if output is not None else files.enter_context(open(log, "ab"))
            proc = subprocess.Popen([exe, "-db", "-f", str(cfg)], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        stack.callback(stop_group, proc)
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        lb = Balancer(f"http://{shown}:{port}", f"http://127.0.0.1:{stats_port}/", cfg, log, proc)
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"haproxy exited with code {proc.returncode}:\n{tail(log) if log else ''}")
            states = {k: v.get("status", "") for k, v in lb.servers().items()}
            if states and all(s == "UP" for s in states.values()) and len(states) == len(reps):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"haproxy did not report every replica UP within {timeout_s:.0f} s: {states}")
            time.sleep(0.1)
        yield lb


@dataclass
class Cluster:
    replicas: list[Replica]
    balancer: Balancer

    @property
    def url(self) -> str:
        return self.balancer.url


@contextlib.contextmanager
def cluster(n: int | None = None, app: str | Path = "app.py", cwd: str | Path = ROOT, **kw) -> Iterator[Cluster]:
    """`replicas(n, …)` and a `balancer` in front of them.  Keywords go to whichever takes them."""
    rep_keys = {"ports", "base_port", "extra_args", "logdir", "timeout_s"}
    with replicas(n, app, cwd, **{k: v for k, v in kw.items() if k in rep_keys}) as reps, \
            balancer(reps, **{k: v for k, v in kw.items() if k not in rep_keys}) as lb:
        yield Cluster(reps, lb)


# ---------------------------------------------------------------- command line

def _stop_on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Arguments after -- are passed to every `streamlit run`.")
    ap.add_argument("--replicas", type=int, default=os.cpu_count() or 1,
                    help="Streamlit replicas, one per core (default: nproc = %(default)s)")
    ap.add_argument("--host", default="0.0.0.0", help="address haproxy listens on (default 0.0.0.0)")
    ap.add_argument("--port", type=int, default=8501, help="port haproxy listens on (default 8501)")
    ap.add_argument("--replica-port", type=int, default=8601,
                    help="first replica's port on 127.0.0.1; the others follow (default 8601)")
    ap.add_argument("--stats-port", type=int, default=8404,
                    help="haproxy's status page on 127.0.0.1 (default 8404)")
    ap.add_argument("--inter", default=CHECK_INTER, help="health-check interval (default 1s)")
    ap.add_argument("--app", default="app.py", help="the Streamlit script (default app.py, run from the checkout)")
    ap.add_argument("--workdir", default=None, help="where the config and logs go (default: a temp dir)")
    ap.add_argument("--print-config", action="store_true",
                    help="print the haproxy configuration for these settings and exit")
    args = ap.parse_args(argv)
    if not 1 <= args.replicas <= 64:
        ap.error("--replicas must be between 1 and 64")

    ports = [args.replica_port + i for i in range(args.replicas)]
    app = Path(args.app)
    if not app.is_absolute():                    # relative to where you are, else to the checkout
        app = app.resolve() if app.exists() else ROOT / app
    if not app.is_file():
        print(f"serve.py: no Streamlit script at {app}", file=sys.stderr)
        return 2
    if args.print_config:
        reps = [Replica(f"r{i + 1}", p, app, ROOT, Path(os.devnull), {}) for i, p in enumerate(ports)]
        print(render_config(reps, f"{args.host}:{args.port}", f"127.0.0.1:{args.stats_port}", args.inter), end="")
        return 0
    if haproxy_path() is None:
        print("serve.py: haproxy not found; install Debian's package: apt-get install haproxy", file=sys.stderr)
        return 2

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="roofline-serve-"))
    try:
        print(f"starting {args.replicas} replicas of {args.app} on 127.0.0.1:{ports[0]}…{ports[-1]} "
              f"(logs in {workdir})", flush=True)
        with replicas(app=app, cwd=ROOT, ports=ports, extra_args=extra, logdir=workdir) as reps, \
                balancer(reps, port=args.port, host=args.host, stats_port=args.stats_port, inter=args.inter,
                         workdir=workdir, output=sys.stdout.fileno()) as lb:
            for r in reps:
                print(f"  replica {r.name}: {r.url} (pid {r.proc.pid}, log {r.log})")
            print(f"  haproxy: pid {lb.proc.pid}, config {lb.config}, status page {lb.stats_url}")
            print(f"roofline on http://{args.host}:{args.port} with {len(reps)} replicas UP.  "
                  f"Ctrl-C stops everything.", flush=True)
            while True:                                     # supervise
                if lb.proc.poll() is not None:
                    print(f"serve.py: haproxy exited with code {lb.proc.returncode}; stopping", file=sys.stderr)
                    return 1
                for r in reps:
                    if not r.alive and time.monotonic() - r.started > 5.0:
                        code = r.proc.returncode
                        r.start()
                        print(f"serve.py: replica {r.name} exited with code {code}; started it again "
                              f"(pid {r.proc.pid})", file=sys.stderr, flush=True)
                time.sleep(1.0)
    except KeyboardInterrupt:
        print("\nstopping haproxy and the replicas…", flush=True)
        return 0
    except RuntimeError as e:
        print(f"serve.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
