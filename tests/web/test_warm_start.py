"""The server warms the compare page's one-time costs at start-up, off the request path
(issue 32 (c)): numpy's import and first bootstrap, the page's templates."""

from __future__ import annotations

import subprocess
import sys

from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.settings import Settings
from benchbook.web.render import warm_first_views

CODE = """
import sys
from benchbook.web import render
assert "numpy" not in sys.modules
render.warm_first_views()
render.warm_first_views()  # once per process
assert len(render._warming) == 1
render._warming[0].join(120)
cached = {key[1] for key in render.TEMPLATES.env.cache}
print("numpy.random" in sys.modules, sorted(set(render.WARMED_TEMPLATES) - cached))
"""


def test_start_up_warms_numpy_and_the_compare_templates_once() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "[]"]


def test_the_app_warms_at_start_up(engine: Engine, settings: Settings) -> None:
    app = create_app(settings, engine)
    assert warm_first_views in app.router.on_startup
