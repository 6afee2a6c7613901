"""`rollwise dashboard` against `rollwise up`, in headless Chromium: the page shows the pods and the reason a
rollout waits, and follows the fix without a reload.

With ROLLWISE_SCREENSHOTS=DIR set, the stuck page is also saved as DIR/dashboard-stuck.png (docs/images has one).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import zygote
from chromium import Page, chromium, find_chromium
from kubectl_support import DEADLINE, Up, statefulset

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)"),
]

PULL = re.compile("rollout waits here: container app is (ErrImagePull|ImagePullBackOff)")


@pytest.fixture
def dashboard(up: Up) -> Iterator[str]:
    proc = zygote.spawn(["dashboard", "--port", "0"], env=up.env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("rollwise dashboard: http://127.0.0.1:"), line + (proc.stderr.read()
                                                                                  if proc.stderr else "")
        yield line.split()[2]
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def _set_image(up: Up, image: str) -> None:
    up.kubectl("patch", "sts", "web", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}))


def _status(url: str, method: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=DEADLINE) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return err.code


def test_the_dashboard_shows_a_stuck_rollout_and_follows_its_fix(up: Up, dashboard: str) -> None:
    up.apply(statefulset("web", replicas=3, claims=False))
    assert _status(dashboard, "GET") == 200
    assert _status(dashboard, "POST") == 405
    assert _status(dashboard + "sets/default/web", "DELETE") == 405
    ready = zygote.run(["status", "sts/web", "--timeout", "60s"], env=up.env, timeout=DEADLINE * 2)
    assert ready.returncode == 0, ready.stderr  # the first rollout is over: only the typo holds the next one
    _set_image(up, "nginx:typo")

    async def go() -> None:
        async with chromium(dashboard) as page:
            listing = await page.wait_for(lambda t: "\tProgressing\t" in t or "\tDegraded\t" in t,
                                          "the list shows web's rollout", "#sets")
            assert "web\tsts\tdefault" in listing
            await page.send("Page.navigate", url=dashboard + "sets/default/web")
            text = await page.wait_for(lambda t: PULL.search(t) is not None and "waiting for web-2" in t
                                       and "live · updated" in t,  # drawn from the stream, not only served
                                       "the set page names the stuck pod and why")
            await _assert_stuck(page, text)
            if os.environ.get("ROLLWISE_SCREENSHOTS"):
                await page.screenshot(Path(os.environ["ROLLWISE_SCREENSHOTS"]) / "dashboard-stuck.png")
            await page.evaluate("window.sameDocument = true")
            _set_image(up, "nginx:1.27")
            up.kubectl("delete", "pod", "web-2", "--wait=false")
            done = await page.wait_for(lambda t: "rollout complete: 3 pods" in t, "the page follows the fix")
            assert await page.evaluate("window.sameDocument") is True  # updated in place, never reloaded
            pods = await page.text("#pods tbody")
            assert [row.split("\t")[:2] for row in pods.splitlines()] == [["✔", f"web-{o}"] for o in range(3)]
            assert "nginx:1.27" in done
            assert not PULL.search(pods)

    asyncio.run(go())


async def _assert_stuck(page: Page, text: str) -> None:
    pods = await page.text("#pods tbody")
    rows = [row.split("\t") for row in pods.splitlines()]
    assert [row[1] for row in rows] == ["web-0", "web-1", "web-2"]
    assert rows[2][0] == "✖" and PULL.search(rows[2][-1])
    # Each pod's and revision's name on one line: "web-" over "0" reads as two names.
    lines = await page.evaluate("Array.from(document.querySelectorAll('#pods tbody tr')).flatMap(tr => "
                                "[1, 2].map(i => { const r = document.createRange(); "
                                "r.selectNodeContents(tr.cells[i]); return r.getClientRects().length; }))")
    assert lines == [1] * 6, lines
    message = await page.text("#message")
    assert re.search("waiting for web-2 to become available: container app is (ErrImagePull|ImagePullBackOff)",
                     message), message
    assert await page.evaluate("Chart.getChart('timeline').data.labels.join(',')") == "web-0,web-1,web-2"
    assert "nginx:typo" in text


def test_the_dashboard_shows_a_canary_step_and_follows_its_abort(up: Up, dashboard: str) -> None:
    up.apply(statefulset("web", replicas=3, claims=False,
                         strategy="{type: RollingUpdate, rollingUpdate: {steps: [{replicas: 1}, {pause: {}}]}}"))
    ready = zygote.run(["status", "sts/web", "--timeout", "60s"], env=up.env, timeout=DEADLINE * 2)
    assert ready.returncode == 0, ready.stderr
    stable = up.read("sts", "web")["status"]["currentRevision"]
    _set_image(up, "nginx:1.27")

    async def go() -> None:
        async with chromium(dashboard) as page:
            await page.send("Page.navigate", url=dashboard + "sets/default/web")
            await page.wait_for(lambda t: "step 2/2 pause until promoted" in t and "live · updated" in t,
                                "the set page shows the canary held at its pause")
            assert await page.text("#canary-stable") == stable
            assert await page.evaluate("document.getElementById('canary-abort-row').hidden") is True
            await page.evaluate("window.sameDocument = true")
            aborted = zygote.run(["rollout", "abort", "sts/web"], env=up.env, timeout=DEADLINE * 2)
            assert aborted.returncode == 0, aborted.stderr
            await page.wait_for(lambda t: "aborted by rollwise rollout abort" in t, "the page shows the abort")
            assert await page.evaluate("document.getElementById('canary-abort-row').hidden") is False
            assert await page.text("#canary-abort") == "aborted by rollwise rollout abort"
            assert await page.text("#canary-step") == "aborted"
            assert await page.evaluate("window.sameDocument") is True  # updated in place, never reloaded

    asyncio.run(go())
