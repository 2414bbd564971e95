"""deploy/: haproxy in front of Streamlit replicas (serve.py, haproxy.cfg.in) and the Kubernetes manifests.

* The template renders to a configuration `haproxy -c` accepts, with the settings docs/deploy.md promises
  (cookie stickiness, redispatch, health checks on /_stcore/health, websocket tunnel timeout).
* Two replicas of app.py behind haproxy (deploy.serve.cluster, free ports):
  - new clients are split across both replicas, over HTTP and over the websocket (/_stcore/stream,
    spoken as the browser does by bench/bench_load.py's Client); haproxy's own counters agree;
  - a client that keeps its SERVERID cookie stays on its replica, request after request and
    websocket after websocket, and a browser's flow (page GET sets the cookie, then the websocket)
    lands the websocket where the page came from;
  - after one replica is killed (SIGKILL of its process group), haproxy marks it DOWN by its health
    checks after `fall` failed checks (its own counters: chkfail = fall, chkdown = 1, last check a
    refused connection), routes nothing more to it, and the killed replica's client gets the app's
    page (not an error page) from the survivor and, reconnecting its websocket, the same view rebuilt
    from the URL; the survivor's client never notices.  Then the replica comes back and gets clients.
* deploy/k8s.yaml and k8s-ingress-nginx.yaml parse (PyYAML, multi-document), pass the Kubernetes
  schemas (kubernetes-validate, strict), and fit together: probes on /_stcore/health at the container
  port the Dockerfile exposes, one core per pod, ClientIP affinity, an autoscaler on CPU that targets
  the Deployment, an Ingress with cookie affinity that targets the Service.

haproxy is Debian's package (.ci/run installs it).  Without it these tests skip on a developer machine
and fail in CI (CI=true).  Nothing here asserts on time: health-check detection is shown by haproxy's
check counters, and every wait is bounded only so that a broken setup fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
import yaml

from bench.bench_load import Client
from deploy.serve import ROOT, Replica, check_config, cluster, free_port, haproxy_path, render_config

DEPLOY = ROOT / "deploy"
FRESH_CLIENTS = 6


# ---------------------------------------------------------------- helpers

@pytest.fixture(scope="module")
def haproxy() -> str:
    exe = haproxy_path()
    if exe is None:
        msg = "haproxy is not installed (Debian package: apt-get install haproxy; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(msg + " — in CI it must be there", pytrace=False)
        pytest.skip(msg)
    return exe


@pytest.fixture(scope="module")
def two(haproxy):
    """Two replicas of app.py behind haproxy, on free ports."""
    with cluster(2) as c:
        yield c


def fetch(url: str, cookie: str | None = None) -> tuple[int, str | None, str | None, str]:
    """GET url → (status, X-Roofline-Replica, the SERVERID value set by the response or None, body)."""
    req = urllib.request.Request(url, headers={"Cookie": f"SERVERID={cookie}"} if cookie else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read().decode("utf-8", "replace")
        sets = [c.split(";")[0].split("=", 1)[1] for c in r.headers.get_all("Set-Cookie") or []
                if c.startswith("SERVERID=")]
        return r.status, r.headers.get("X-Roofline-Replica"), (sets[0] if sets else None), body


def is_app_page(body: str) -> bool:
    """Streamlit's index page (what a browser loads first), not haproxy's or anyone's error page."""
    return "<title>Streamlit</title>" in body and '<div id="root">' in body


def sections(cfg: str) -> dict[str, list[str]]:
    """haproxy config → {"global": [...], "defaults": [...], "backend replicas": [...], …}: setting lines."""
    out: dict[str, list[str]] = {}
    current = None
    for raw in cfg.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line[0].isspace():
            current = " ".join(line.split()[:2])
            out[current] = []
        else:
            out[current].append(" ".join(line.split()))
    return out


def setting(lines: list[str], prefix: str) -> str:
    found = [x for x in lines if x.startswith(prefix)]
    assert len(found) == 1, f"expected one {prefix!r} line, found {found}"
    return found[0]


def seconds(word: str) -> float:
    """haproxy time format: 250ms, 1s, 1h…"""
    m = re.fullmatch(r"(\d+)(us|ms|s|m|h|d)?", word)
    assert m, word
    return int(m[1]) * {"us": 1e-6, "ms": 1e-3, None: 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]


def fall_of(cfg: str) -> int:
    words = setting(sections(cfg)["backend replicas"], "default-server").split()
    return int(words[words.index("fall") + 1])


# ---------------------------------------------------------------- the configuration

def fake_replicas(n: int) -> list[Replica]:
    return [Replica(f"r{i + 1}", 9001 + i, Path("app.py"), ROOT, Path(os.devnull), {}) for i in range(n)]


def test_the_template_renders_a_configuration_haproxy_accepts(haproxy, tmp_path):
    cfg = render_config(fake_replicas(3), "127.0.0.1:9000", "127.0.0.1:9400")
    path = tmp_path / "haproxy.cfg"
    path.write_text(cfg)
    check_config(path)                                             # raises with haproxy's message if not
    s = sections(cfg)
    backend, defaults = s["backend replicas"], s["defaults"]
    # One server per replica, each with its own cookie value, all health-checked (default-server check).
    servers = [x.split() for x in backend if x.startswith("server ")]
    assert [(w[1], w[2], w[w.index("cookie") + 1]) for w in servers] == [
        ("r1", "127.0.0.1:9001", "r1"), ("r2", "127.0.0.1:9002", "r2"), ("r3", "127.0.0.1:9003", "r3")]
    assert setting(backend, "default-server").split()[1] == "check"
    assert setting(backend, "cookie ").split()[1:5] == ["SERVERID", "insert", "indirect", "nocache"]
    assert setting(backend, "option httpchk") == "option httpchk GET /_stcore/health"
    assert setting(backend, "http-check expect") == "http-check expect rstring ^ok$"
    assert setting(defaults, "option redispatch").startswith("option redispatch")
    assert int(setting(defaults, "retries").split()[1]) >= 1
    assert seconds(setting(defaults, "timeout tunnel").split()[2]) >= 3600      # an idle websocket stays
    words = setting(backend, "default-server").split()
    assert seconds(words[words.index("inter") + 1]) <= 2 and fall_of(cfg) >= 1
    assert setting(s["listen stats"], "bind").split()[1].startswith("127.0.0.1:")   # status page: localhost


def test_check_config_rejects_what_haproxy_rejects(haproxy, tmp_path):
    path = tmp_path / "bad.cfg"
    path.write_text(render_config(fake_replicas(1), "127.0.0.1:9000", "127.0.0.1:9400").replace(
        "balance leastconn", "balance no-such-algorithm"))
    with pytest.raises(RuntimeError, match=r"bad\.cfg:\d+\] : balance only supports"):
        check_config(path)


def test_serve_print_config_lists_consecutive_replica_ports(haproxy):
    out = subprocess.run([sys.executable, str(DEPLOY / "serve.py"), "--print-config", "--replicas", "4",
                          "--port", "9500", "--replica-port", "9601"], capture_output=True, text=True, check=True)
    s = sections(out.stdout)
    assert setting(s["frontend roofline"], "bind") == "bind 0.0.0.0:9500"
    assert [x.split()[2] for x in s["backend replicas"] if x.startswith("server ")] == [
        f"127.0.0.1:{p}" for p in (9601, 9602, 9603, 9604)]


# ---------------------------------------------------------------- split and stick

def test_new_http_clients_are_split_and_a_kept_cookie_sticks(two):
    before = {k: int(v["stot"]) for k, v in two.balancer.servers().items()}
    served = []
    for _ in range(FRESH_CLIENTS):                                  # new clients: no cookie
        status, replica, cookie, body = fetch(two.url + "/")
        assert status == 200 and is_app_page(body)
        assert cookie == replica, "the cookie set names the replica that answered"
        served.append(replica)
    assert set(served) == {"r1", "r2"}, served
    after = {k: int(v["stot"]) for k, v in two.balancer.servers().items()}
    assert all(after[k] > before[k] for k in ("r1", "r2")), (before, after)   # haproxy's own count agrees
    for name in ("r1", "r2"):                                       # a client that keeps its cookie
        for _ in range(5):
            status, replica, cookie, body = fetch(two.url + "/", cookie=name)
            assert (status, replica, cookie) == (200, name, None) and is_app_page(body)


def test_websocket_sessions_are_split_and_a_kept_cookie_sticks(two):
    async def scenario():
        # New sessions opened together: leastconn spreads them over both replicas.
        clients = [Client(two.url) for _ in range(4)]
        for c in clients:
            await c.connect()
        try:
            assert {c.replica for c in clients} == {"r1", "r2"}, [c.replica for c in clients]
            assert all(c.cookies.get("SERVERID") == c.replica for c in clients)
            counts = {k: int(v["scur"]) for k, v in two.balancer.servers().items()}
            assert counts["r1"] >= 1 and counts["r2"] >= 1, counts          # haproxy holds both
            for c in clients:
                run = await c.rerun("")
                assert not run.problems() and run.charts > 0
        finally:
            for c in clients:
                await c.__aexit__(None, None, None)

        # A browser: the page GET sets the cookie, the websocket carries it and lands on the same replica.
        _, replica, cookie, _ = fetch(two.url + "/")
        async with Client(two.url, cookies={"SERVERID": cookie}) as c:
            assert c.replica == replica
            await c.rerun("")
            run = await c.move("Batch")
            assert not run.problems()
            for _ in range(3):                                  # the same session cookie, new websockets
                await c.reconnect()
                assert c.replica == replica
                assert not (await c.rerun()).problems()

    asyncio.run(scenario())


# ---------------------------------------------------------------- failover

def test_a_killed_replica_is_marked_down_and_its_clients_move_to_the_survivor(two):
    lb = two.balancer
    fall = fall_of(lb.config.read_text())
    victim, survivor = two.replicas[1], two.replicas[0]

    async def scenario():
        doomed = Client(two.url, cookies={"SERVERID": victim.name})
        other = Client(two.url, cookies={"SERVERID": survivor.name})
        for c in (doomed, other):
            await c.connect()
            await c.rerun("")
            await c.rerun("kv-cache")
            await c.move("Batch", 2)
            await c.move("Context", -1)
        assert (doomed.replica, other.replica) == (victim.name, survivor.name)
        assert doomed.query_string, "the moves are in the URL (else the view check below proves nothing)"
        view, query, page = doomed.view(), doomed.query_string, doomed.page_hash

        victim.kill()
        # At once, before or after haproxy notices: the page, from the survivor (retry + redispatch).
        status, replica, cookie, body = await asyncio.to_thread(fetch, two.url + "/", victim.name)
        assert (status, replica, cookie) == (200, survivor.name, survivor.name) and is_app_page(body)
        # Marked DOWN by its health checks: `fall` failed checks in a row, the last a refused connection.
        row = await asyncio.to_thread(lb.wait_status, victim.name, "DOWN")
        assert (int(row["chkfail"]), int(row["chkdown"])) == (fall, 1), row
        assert row["check_status"] == "L4CON", row
        routed = int(row["stot"])
        # From then on nothing goes to it: new clients all land on the survivor.
        for _ in range(FRESH_CLIENTS):
            assert (await asyncio.to_thread(fetch, two.url + "/"))[1] == survivor.name

        # The killed replica's session: its websocket is gone; it reconnects, still sending its old cookie.
        with pytest.raises(websockets.exceptions.ConnectionClosed):
            await doomed.move("Batch")
        await doomed.reconnect()
        assert doomed.replica == survivor.name and doomed.cookies["SERVERID"] == survivor.name
        run = await doomed.rerun()                      # no widget states: the URL alone
        assert not run.problems() and not run.page_not_found and run.charts > 0
        assert (doomed.page_hash, doomed.query_string, doomed.view()) == (page, query, view)
        # …and that is the URL's doing: a session without it shows another view.
        async with Client(two.url) as fresh:
            await fresh.rerun("kv-cache", query_string="")
            assert fresh.view() != view
        # The survivor's session carries on as if nothing happened.
        run = await other.move("Batch")
        assert not run.problems() and other.replica == survivor.name
        for c in (doomed, other):
            await c.__aexit__(None, None, None)
        assert int(lb.servers()[victim.name]["stot"]) == routed

    try:
        asyncio.run(scenario())
    finally:
        # Back to two: the replica restarts, passes `rise` checks and gets new clients again.
        if not victim.alive:
            victim.start()
            victim.wait_healthy()
        lb.wait_status(victim.name, "UP")
    assert {fetch(two.url + "/")[1] for _ in range(FRESH_CLIENTS)} == {"r1", "r2"}


# ---------------------------------------------------------------- Kubernetes

def k8s_docs(name: str) -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d is not None]
    kinds = [d["kind"] for d in docs]
    assert len(set(kinds)) == len(kinds), kinds
    return {d["kind"]: d for d in docs}


def test_k8s_manifests_pass_the_kubernetes_schemas():
    import kubernetes_validate as kv  # requirements-dev.txt
    for name in ("k8s.yaml", "k8s-ingress-nginx.yaml"):
        for doc in k8s_docs(name).values():
            kv.validate(doc, kv.latest_version(), strict=True)       # raises ValidationError


def test_k8s_manifest_deployment_service_and_autoscaler_fit_together():
    docs = k8s_docs("k8s.yaml")
    assert {"Deployment", "Service", "HorizontalPodAutoscaler"} <= set(docs)
    dep, svc, hpa = docs["Deployment"], docs["Service"], docs["HorizontalPodAutoscaler"]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    exposed = re.search(r"^EXPOSE\s+(\d+)", (ROOT / "Dockerfile").read_text(), re.M)
    assert ports["http"] == int(exposed[1]), "the container port is the one the image listens on"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/_stcore/health", "port": "http"}, probe
    cpu = {k: c["resources"][k]["cpu"] for k in ("requests", "limits")}
    assert cpu == {"requests": "1", "limits": "1"}, "one core per pod: one Streamlit process uses one"
    env = {e["name"]: e for e in c["env"]}
    assert env["STREAMLIT_SERVER_COOKIE_SECRET"]["valueFrom"]["secretKeyRef"]["key"]
    assert dep["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(
        re.search(r"^USER\s+(\d+)", (ROOT / "Dockerfile").read_text(), re.M)[1])

    assert svc["spec"]["selector"].items() <= labels.items()
    assert svc["spec"]["sessionAffinity"] == "ClientIP"
    assert {p["targetPort"] for p in svc["spec"]["ports"]} <= set(ports) | set(ports.values())

    ref = hpa["spec"]["scaleTargetRef"]
    assert (ref["apiVersion"], ref["kind"], ref["name"]) == (dep["apiVersion"], "Deployment", dep["metadata"]["name"])
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu" and metric["resource"]["target"]["type"] == "Utilization"
    assert 0 < metric["resource"]["target"]["averageUtilization"] <= 100
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def test_k8s_ingress_has_cookie_affinity_and_websocket_timeouts_and_targets_the_service():
    svc = k8s_docs("k8s.yaml")["Service"]
    ing = k8s_docs("k8s-ingress-nginx.yaml")["Ingress"]
    notes = ing["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    for t in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[f"nginx.ingress.kubernetes.io/{t}"]) >= 3600
    backends = [p["backend"]["service"] for r in ing["spec"]["rules"] for p in r["http"]["paths"]]
    assert backends and all(b["name"] == svc["metadata"]["name"] for b in backends)
    assert all(b["port"]["name"] in {p["name"] for p in svc["spec"]["ports"]} for b in backends)


# ---------------------------------------------------------------- the script itself

def consecutive_free_ports(n: int) -> int:
    """The first of n consecutive ports of 127.0.0.1 that are free now (serve.py numbers replicas so)."""
    for _ in range(100):
        first = free_port()
        socks = []
        try:
            for p in range(first, first + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return first
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def test_serve_script_starts_supervises_and_stops_everything(haproxy, tmp_path):
    """`python deploy/serve.py`: up behind haproxy; a killed replica is started again and taken back;
    SIGTERM stops haproxy and every replica's whole process group, and the script exits 0."""
    port, stats_port, first = free_port(), free_port(), consecutive_free_ports(2)
    out = tmp_path / "serve.out"
    with open(out, "wb") as f:
        proc = subprocess.Popen([sys.executable, str(DEPLOY / "serve.py"), "--replicas", "2", "--host", "127.0.0.1",
                                 "--port", str(port), "--replica-port", str(first), "--stats-port", str(stats_port),
                                 "--workdir", str(tmp_path / "work")],
                                stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_for(pattern: str) -> re.Match:
        deadline = time.monotonic() + 120
        while not (m := re.search(pattern, out.read_text(errors="replace"))):
            assert proc.poll() is None, f"serve.py exited with {proc.returncode}:\n{out.read_text()}"
            assert time.monotonic() < deadline, f"no {pattern!r} in:\n{out.read_text()}"
            time.sleep(0.1)
        return m

    pids: dict[str, int] = {}
    try:
        wait_for(r"with 2 replicas UP")
        text = out.read_text()
        pids.update({m[1]: int(m[2]) for m in re.finditer(r"replica (r\d): http://\S+ \(pid (\d+)", text)})
        pids["haproxy"] = int(re.search(r"haproxy: pid (\d+)", text)[1])
        assert set(pids) == {"r1", "r2", "haproxy"}, text
        url = f"http://127.0.0.1:{port}"
        assert {fetch(url + "/", cookie=name)[1] for name in ("r1", "r2")} == {"r1", "r2"}

        os.killpg(pids["r2"], signal.SIGKILL)              # a crash: serve.py starts it again
        pids["r2 again"] = int(wait_for(r"replica r2 exited with code -9; started it again \(pid (\d+)\)")[1])
        deadline = time.monotonic() + 120
        while fetch(url + "/", cookie="r2")[1] != "r2":    # haproxy takes it back once its checks pass
            assert time.monotonic() < deadline, "r2 never came back"
            time.sleep(0.2)

        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, out.read_text()
        for pid in pids.values():                          # every process group is gone
            with pytest.raises(ProcessLookupError):
                os.killpg(pid, 0)
        assert "stopping haproxy and the replicas" in out.read_text()
    finally:                                               # whatever failed, leave nothing running
        for pid in [proc.pid, *pids.values()]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        proc.wait()
