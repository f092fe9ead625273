"""Saving a run's DataFrames: every table of a result to one file each, as Parquet
(pyarrow) or CSV (pandas' writer, which quotes what needs quoting)."""

import os

FORMATS = ("parquet", "csv")


class Tables:
    """A result whose DataFrames are named in ``TABLES``."""

    TABLES = ()

    def tables(self):
        """The result's DataFrames by name."""
        return {name: getattr(self, name) for name in self.TABLES}

    def save(self, directory, format="parquet"):
        """Write each table to ``directory/NAME.parquet`` (or ``.csv``); returns the paths
        written, by table name."""
        if format not in FORMATS:
            raise ValueError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
        os.makedirs(directory, exist_ok=True)
        paths = {}
        for name, df in self.tables().items():
            paths[name] = os.path.join(os.fspath(directory), f"{name}.{format}")
            write(df, paths[name], format)
        return paths


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
