"""The experiments' figures: the Python package's plotting module, nanopu.plots
(crates/py/python/nanopu/plots.py; docs/python.md "Plots"), under the name the experiments'
scripts import from here. `make python` installs the package."""
from nanopu.plots import SIZE, bars, boxplot, finish, mean_ci, plot, plt, rows_csv  # noqa: F401
