"""The package's plotting module, nanopu.plots (which the experiments draw with, through
experiments/lib/plots.py): every format, the same SVG bytes when redrawn, error bars and
open markers where asked, correct confidence intervals, grouped bars, typed CSV rows."""

import pathlib
import sys

import pytest

import nanopu.plots as plots

LIB = pathlib.Path(__file__).resolve().parents[3] / "experiments" / "lib"

SERIES = [("a", [(1, 1000.0, (900.0, 1200.0)), (2, 2000.0, (1800.0, 2100.0)), (4, float("inf"))]),
          ("b", [(1, 500.0), (2, 700.0), (4, 900.0)])]


def test_every_format_is_written_and_an_svg_is_the_same_bytes_when_redrawn(tmp_path):
    for ext in ["svg", "png", "pdf"]:
        plots.plot(str(tmp_path / f"f.{ext}"), "t", "x", "y (us)", SERIES, yscale=1000.0)
        assert (tmp_path / f"f.{ext}").stat().st_size > 1000
    first = (tmp_path / "f.svg").read_bytes()
    plots.plot(str(tmp_path / "f.svg"), "t", "x", "y (us)", SERIES, yscale=1000.0)
    assert (tmp_path / "f.svg").read_bytes() == first
    assert b"<dc:date>" not in first


def test_error_bars_are_drawn_only_where_given(tmp_path):
    assert plots.plot(str(tmp_path / "bars.svg"), "t", "x", "y", SERIES) == 2
    plain = [(label, [p[:2] for p in pts]) for label, pts in SERIES]
    assert plots.plot(str(tmp_path / "plain.svg"), "t", "x", "y", plain) == 0


def test_boxplot_draws_one_box_per_series_and_group(tmp_path):
    groups = [("level 1", [("compute", [1.0, 2.0, 3.0]), ("idle", [0.5, 1.5])]),
              ("level 2", [("compute", [2.0, 4.0]), ("idle", [])])]
    assert plots.boxplot(str(tmp_path / "box.svg"), "t", "time", groups) == 3


def test_mean_ci_uses_students_t():
    m, (lo, hi) = plots.mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0
    assert hi - m == pytest.approx(4.303 * 1.0 / 3 ** 0.5, rel=1e-4)
    assert plots.mean_ci([5.0]) == (5.0, (5.0, 5.0))


def test_bars_draw_one_bar_per_series_in_each_group_and_leave_gaps(tmp_path):
    groups = [("8 hosts", [("traditional", 3109.3), ("zeronic", 1656.0), ("rdma", 441.0)]),
              ("16 hosts", [("traditional", 3302.4), ("rdma", 470.0)])]
    assert plots.bars(str(tmp_path / "bars.svg"), "t", "time (us)", groups) == 5
    first = (tmp_path / "bars.svg").read_bytes()
    assert b"zeronic" in first and b"16 hosts" in first
    plots.bars(str(tmp_path / "bars.svg"), "t", "time (us)", groups)
    assert (tmp_path / "bars.svg").read_bytes() == first


def test_rows_csv_converts_the_named_columns_and_leaves_the_rest(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("stack,link_gbps,goodput_gbps\ntraditional,100,5.83\nzeronic,25,\n")
    rows = plots.rows_csv(str(path), link_gbps=int, goodput_gbps=float)
    assert rows == [{"stack": "traditional", "link_gbps": 100, "goodput_gbps": 5.83},
                    {"stack": "zeronic", "link_gbps": 25, "goodput_gbps": None}]


def test_the_experiments_draw_with_the_package(monkeypatch):
    monkeypatch.syspath_prepend(str(LIB))
    sys.modules.pop("plots", None)
    import plots as lib  # experiments/lib/plots.py

    for name in ["plot", "boxplot", "bars", "mean_ci", "rows_csv"]:
        assert getattr(lib, name) is getattr(plots, name)
