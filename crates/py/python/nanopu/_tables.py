"""Saving a run's DataFrames: every table of a result to one file each, as Parquet
(pyarrow, the package's ``parquet`` extra) or CSV (pandas' writer, which quotes what needs
quoting); and the one-line summary every result prints as."""

import os
import warnings

from ._native import NanopuError

FORMATS = ("parquet", "csv")

# How to get pyarrow, named wherever it is missing.
INSTALL_PYARROW = "pip install 'nanopu[parquet]' (or pyarrow)"


class Tables:
    """A result whose DataFrames are named in ``TABLES``; ``FIGURES`` names the summary's
    (dotted) keys its one-line summary shows, after its kind and whether it is complete."""

    TABLES = ()
    FIGURES = ()

    def tables(self):
        """The result's DataFrames by name."""
        return {name: getattr(self, name) for name in self.TABLES}

    def save(self, directory, format=None):
        """Write each table to ``directory/NAME.parquet`` (or ``.csv``); returns the paths
        written, by table name. ``format`` None: Parquet if pyarrow is installed, else CSV
        with a warning saying so; ``"parquet"`` without pyarrow raises ``NanopuError``
        saying how to install it."""
        format = _format(format)
        os.makedirs(directory, exist_ok=True)
        paths = {}
        for name, df in self.tables().items():
            paths[name] = os.path.join(os.fspath(directory), f"{name}.{format}")
            write(df, paths[name], format)
        return paths

    def complete(self):
        """Whether the run did all it was asked (None where the result does not say)."""
        return getattr(self, "summary", {}).get("complete")

    def counts(self):
        """Further figures the one-line summary shows (rows of a table, ...), by name."""
        return {}

    def __repr__(self):
        """The kind of result, whether it is complete, and its key figures, on one line."""
        flat = dict(flat_figures(getattr(self, "summary", {})))
        shown = {**{k: flat[k] for k in self.FIGURES if k in flat}, **self.counts()}
        words = [f"{k}={v!r}" for k, v in shown.items()]
        if self.complete() is not None:
            words.insert(0, "complete" if self.complete() else "INCOMPLETE")
        return f"<{type(self).__name__} {', '.join(words)}>"


def flat_figures(d, prefix=""):
    """A summary's single figures, nested ones named ``a.b`` (lists left out)."""
    for key, value in d.items():
        if isinstance(value, dict):
            yield from flat_figures(value, f"{prefix}{key}.")
        elif not isinstance(value, list):
            yield prefix + key, value


def _format(format):
    """The format to write: the one asked for, or Parquet if pyarrow can be imported."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
    if format == "csv" or _has_pyarrow():
        return format or "parquet"
    if format == "parquet":
        raise NanopuError(f"format 'parquet' needs pyarrow, which is not installed: {INSTALL_PYARROW}")
    warnings.warn(f"pyarrow is not installed, so the tables are written as CSV; for Parquet, {INSTALL_PYARROW}",
                  stacklevel=3)
    return "csv"


def _has_pyarrow():
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def write(df, path, format):
    if format == "csv":
        df.to_csv(path)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Payload words are 64-bit unsigned: pyarrow would take Python integers as signed, so
    # those columns are given their type (and come last).
    words = [c for c in df.columns if c == "words"]
    table = pa.Table.from_pandas(df.drop(columns=words), preserve_index=True)
    u64s = pa.list_(pa.uint64())
    for c in words:
        table = table.append_column(pa.field(c, u64s), pa.array(list(df[c]), type=u64s))
    pq.write_table(table, path)
