"""The README's Python example runs as printed, and saves its plot."""

import matplotlib


def readme_example(root):
    text = (root / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_example_runs(root, tmp_path, monkeypatch, capsys):
    code = readme_example(root)
    assert len(code.strip().splitlines()) <= 20
    # The example's paths are relative to the repository's root; its plot goes to tmp_path.
    for d in ("experiments", "sw"):
        (tmp_path / d).symlink_to(root / d)
    monkeypatch.chdir(tmp_path)
    matplotlib.use("Agg")
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "fabric.trims" in out and "latency_us" in out and "[42]" in out
    assert (tmp_path / "incast.png").read_bytes().startswith(b"\x89PNG")
