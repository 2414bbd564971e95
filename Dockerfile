# roofline — the Streamlit app in a container.  See docs/deploy.md.
#
#   docker build -t roofline .
#   docker run --rm -p 8501:8501 roofline          # then open http://localhost:8501
#
# The same Python as the test suite (3.11); runtime dependencies exactly as requirements.txt
# (what Streamlit Community Cloud installs too).  tests/deploy/test_deploy.py lints this file with
# hadolint and starts the app the way ENTRYPOINT below does, then polls the HEALTHCHECK.
FROM python:3.11-slim-bookworm

# Server settings that suit a container but not a laptop (the rest is in .streamlit/config.toml):
# listen on every interface, no file watcher and no "always rerun" toggle, viewer-only toolbar,
# no tracebacks in the browser.
# Override any of them with `docker run -e STREAMLIT_...`; the health check follows the port.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STREAMLIT_SERVER_PORT=8501 \
    STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    STREAMLIT_SERVER_ALLOW_RUN_ON_SAVE=false \
    STREAMLIT_CLIENT_TOOLBAR_MODE=viewer \
    STREAMLIT_CLIENT_SHOW_ERROR_DETAILS=type

WORKDIR /app

# KaTeX (with its fonts) for the offline deck's equations (ui/present/deck.py; the Walkthrough's Download deck).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libjs-katex=0.16.4+~cs6.1.0-1 \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, so a code change does not reinstall them.
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

# The app (what .dockerignore leaves: app.py, views/, ui/, model/, presets/, .streamlit/).
# Owned by root and read-only to the user the server runs as.
COPY . .
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin app
USER 10001

EXPOSE 8501

# No curl in a slim image: Python's urllib asks /_stcore/health, which answers "ok".  It follows
# STREAMLIT_SERVER_PORT and STREAMLIT_SERVER_BASE_URL_PATH if `docker run -e` changes them.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; env = os.environ.get; base = env('STREAMLIT_SERVER_BASE_URL_PATH', '').strip('/'); url = 'http://127.0.0.1:%s/%s_stcore/health' % (env('STREAMLIT_SERVER_PORT', '8501'), base + '/' if base else ''); raise SystemExit(urllib.request.urlopen(url, timeout=4).read() != b'ok')"]

ENTRYPOINT ["python", "-m", "streamlit", "run", "app.py"]
