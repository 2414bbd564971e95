"""The real-browser fixtures (tests/browser/helpers.py), defined once for the browser tests: a session-scoped
fixture imported into several test modules would be one fixture per module, and a second Playwright in the
same worker process fails ("Sync API inside the asyncio loop")."""

from tests.browser.helpers import app_page, app_url, chromium_browser, chromium_path  # noqa: F401
