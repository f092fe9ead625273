"""examples/tour.ipynb runs from top to bottom (nbclient, on a kernel of this Python), so it
cannot rot: every cell without an error, its plots drawn, its sweep's runs valid."""

import json
import sys

import nbformat
from nbclient import NotebookClient


def this_python_kernel(tmp_path, monkeypatch):
    """A kernel of the interpreter running the tests (with this nanopu), whatever kernels
    the machine has installed: a kernel spec of its own, found through JUPYTER_PATH."""
    spec = tmp_path / "jupyter" / "kernels" / "nanopu-tests"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "nanopu tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "nanopu-tests"


def test_the_tour_notebook_runs(root, tmp_path, monkeypatch):
    path = root / "examples" / "tour.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not any(c.outputs for c in code), "store the notebook without outputs"
    # The kernel inherits the environment: its sweep caches under tmp_path, never in ~/.cache.
    monkeypatch.setenv("NANOPU_CACHE_DIR", str(tmp_path / "cache"))
    kernel = this_python_kernel(tmp_path, monkeypatch)
    NotebookClient(nb, timeout=120, kernel_name=kernel, resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
    text = "".join(o.get("text", "") for o in outputs)
    assert "hello from picolibc" in text and "valid: True" in text
    assert "sweep: 18/18 runs (0 from the cache, 0 failed)" in text
    assert len(list((tmp_path / "cache" / "runs").glob("*/*.json"))) == 18
