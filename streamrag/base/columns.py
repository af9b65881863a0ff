"""Column types: one declared type per column → its Arrow type, its pandas dtype.

Every table kind declares its row once (the stabilization row, ``ResultRow``, the
per-prefix evidence, the sweep table's rule); its Arrow schema and the dtypes of a frame
read back are derived here, the same for every reader and writer:

======== ==================== =================================================
declared Arrow                pandas (a frame read back)
======== ==================== =================================================
``str``  ``string``           ``str`` (pandas' string dtype; NaN when undefined)
``int``  ``int64``            ``Int64`` (``<NA>`` when undefined)
``float`` ``double``          ``float64`` (NaN when undefined)
``bool`` ``bool``             ``boolean`` (``<NA>`` when undefined)
======== ==================== =================================================

A column whose values are all undefined keeps its declared type (never Arrow ``null``),
and a column has the same dtype whether or not some value is undefined, so two tables of
one kind always combine (``pyarrow.dataset``, ``pandas.concat``).

A table kind without a row model of its own declares its columns as a :class:`TableKind`
(name → type in written order, plus types for columns named by a rule): its schema, its
typed frames and its CSV reader are the kind's methods.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from streamrag.base.errors import TableError
from streamrag.base.formats import ARROW_KEY, FORMAT_VERSION, check_version

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

Dtype = Literal["str", "int", "float", "bool"]

PANDAS_DTYPES: dict[str, str] = {"str": "str", "int": "Int64", "float": "float64", "bool": "boolean"}
"""A declared type's dtype in a frame (one convention for every reader)."""

TABLE_KEY = b"streamrag.table"
"""The table kind in a Parquet file's Arrow schema metadata."""


def arrow_type(dtype: Any) -> pa.DataType:
    """The Arrow type of a declared type (an Arrow type passes through)."""
    import pyarrow as pa

    if isinstance(dtype, pa.DataType):
        return dtype
    return {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}[dtype]


def arrow_schema(columns: Mapping[str, Any], table: str) -> pa.Schema:
    """The Arrow schema of a table kind: ``columns`` (name → declared type or Arrow type,
    in order), with the kind and :data:`~streamrag.base.formats.FORMAT_VERSION` in its
    metadata."""
    import pyarrow as pa

    fields = [pa.field(name, arrow_type(dtype)) for name, dtype in columns.items()]
    return pa.schema(fields, metadata={TABLE_KEY: table.encode(), ARROW_KEY: str(FORMAT_VERSION).encode()})


def dtype_of_arrow(dtype: pa.DataType) -> Dtype | None:
    """The declared type an Arrow type stands for (``None``: ``null`` or another type)."""
    import pyarrow as pa

    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return "str"
    if pa.types.is_boolean(dtype):
        return "bool"
    if pa.types.is_integer(dtype):
        return "int"
    if pa.types.is_floating(dtype):
        return "float"
    return None


def declared_dtypes(df: pd.DataFrame) -> dict[str, Dtype]:
    """The declared type of every column of a typed frame (:func:`typed_frame`'s
    output); a column in another dtype is a ValueError (a programming error)."""
    by_dtype = {v: k for k, v in PANDAS_DTYPES.items()}
    out: dict[str, Dtype] = {}
    for name in df.columns:
        dtype = by_dtype.get(str(df[name].dtype))
        if dtype is None:
            raise ValueError(f"column {name!r}: dtype {df[name].dtype} is none of {', '.join(PANDAS_DTYPES.values())}")
        out[str(name)] = dtype  # type: ignore[assignment]
    return out


def typed_frame(df: pd.DataFrame, columns: Mapping[str, Any]) -> pd.DataFrame:
    """``df`` with every declared column of ``columns`` present in it cast to its dtype
    (:data:`PANDAS_DTYPES`); other columns stay as they are."""
    out = df.copy()
    for name, dtype in columns.items():
        if name in out.columns and isinstance(dtype, str):
            out[name] = out[name].astype(PANDAS_DTYPES[dtype])
    return out


def to_arrow(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """``df`` as an Arrow table of exactly ``schema`` (its columns, in its order); a value
    that does not fit its column's type is a ValueError naming the column."""
    import pyarrow as pa

    arrays = []
    for field in schema:
        column = df[field.name]
        try:
            arrays.append(pa.array(column, type=field.type, from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueError(f"column {field.name!r}: its values are not {field.type}: {exc}") from None
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    schema: pa.Schema,
    *,
    metadata: Mapping[str, bytes] | None = None,
    row_group_size: int | None = None,
) -> Path:
    """Write ``df`` as Parquet with the Arrow schema ``schema`` (plus ``metadata`` in the
    schema's key-value metadata), atomically; ``row_group_size``: rows per row group
    (None: pyarrow's default, 2²⁰)."""
    import pyarrow.parquet as pq

    from streamrag.base.atomic import atomic_path

    out = Path(path)
    table = to_arrow(df, schema)
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    with atomic_path(out) as tmp:
        pq.write_table(table, tmp, row_group_size=row_group_size)
    return out


def file_version(schema: pa.Schema, path: str | os.PathLike[str]) -> int:
    """The format version a Parquet file's schema records (checked: see :mod:`~streamrag.base.formats`)."""
    return check_version((schema.metadata or {}).get(ARROW_KEY), path)


def conform(table: pa.Table, columns: Mapping[str, Any], path: str | os.PathLike[str]) -> pa.Table:
    """An Arrow table read from ``path`` with its declared columns cast to their types:
    a version-1 file's all-undefined (``null``) columns, and any narrower type, become
    the declared one. A value that cannot be cast is a TableError naming file and column."""
    import pyarrow as pa

    file_version(table.schema, path)
    for name, dtype in columns.items():
        i = table.schema.get_field_index(name)
        if i < 0:
            continue
        want = arrow_type(dtype)
        if table.schema.field(i).type != want:
            try:
                table = table.set_column(i, pa.field(name, want), table.column(i).cast(want))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise TableError(f"{path}: column {name!r}: {table.schema.field(i).type} is not {want}: {exc}") from None
    return table


def read_parquet(path: str | os.PathLike[str], columns: Mapping[str, Any]) -> pd.DataFrame:
    """A Parquet table as a frame, declared columns in their dtypes (any version this
    streamrag reads; :func:`conform`). Raises TableError when the file is unreadable."""
    import pyarrow.lib
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pyarrow.lib.ArrowException) as exc:
        raise TableError(f"{path}: cannot read the table: {exc}") from None
    table = conform(table, columns, path)
    return typed_frame(table.to_pandas(ignore_metadata=True), columns)


def read_csv(path: str | os.PathLike[str] | IO[bytes], columns: Mapping[str, Any]) -> pd.DataFrame:
    """A CSV table as a frame: an empty field is undefined, declared columns in their
    dtypes, other columns as pandas infers them. Booleans are ``True``/``False``."""
    import pandas as pd

    text = {name: "str" for name, dtype in columns.items() if dtype == "str"}
    try:
        df = pd.read_csv(path, dtype=text, keep_default_na=False, na_values=[""])
    except (OSError, ValueError) as exc:  # empty, not CSV, not UTF-8, a declared text column missing
        raise TableError(f"{path}: cannot read the table: {' '.join(str(exc).split())}") from None
    try:
        return typed_frame(df, columns)
    except (TypeError, ValueError) as exc:
        raise TableError(f"{path}: a column does not hold its declared type: {exc}") from None


@dataclass(frozen=True)
class TableKind:
    """A table kind declared once: ``name`` (its Arrow schema's ``streamrag.table``),
    ``columns`` (name → declared type, in written order) and ``patterns`` (``(regex,
    type)``: the type of every column whose whole name matches, for columns named by a
    rule such as a load run's ``{system}_wait_{resource}_ms``).

    ``extra`` (every method): types of columns another declaration gives, such as the
    sweep axes a frontier is grouped by; they take precedence."""

    name: str
    columns: Mapping[str, Dtype]
    patterns: tuple[tuple[str, Dtype], ...] = ()

    def dtype(self, column: str) -> Dtype | None:
        """The declared type of ``column`` (``None``: not declared)."""
        if column in self.columns:
            return self.columns[column]
        return next((dtype for rule, dtype in self.patterns if re.fullmatch(rule, column)), None)

    def dtypes(self, columns: Iterable[str] | None = None, extra: Mapping[str, Dtype] | None = None) -> dict[str, Dtype]:
        """The declared type of each of ``columns`` (default the declared ones) that has
        one, in that order; an undeclared column is left out."""
        out: dict[str, Dtype] = {}
        for name in self.columns if columns is None else columns:
            dtype = (extra or {}).get(name) or self.dtype(name)
            if dtype is not None:
                out[name] = dtype
        return out

    def schema(self, columns: Iterable[str] | None = None, extra: Mapping[str, Dtype] | None = None) -> pa.Schema:
        """The Arrow schema of a table of this kind with ``columns`` (default the declared
        ones); a column without a declared type is a ValueError (a programming error)."""
        names = list(self.columns if columns is None else columns)
        dtypes = self.dtypes(names, extra)
        undeclared = [name for name in names if name not in dtypes]
        if undeclared:
            raise ValueError(f"table {self.name!r}: column {undeclared[0]!r} has no declared type")
        return arrow_schema(dtypes, self.name)

    def frame(
        self,
        rows: Sequence[Mapping[str, Any]],
        columns: Sequence[str] | None = None,
        extra: Mapping[str, Dtype] | None = None,
    ) -> pd.DataFrame:
        """``rows`` (dicts; ``None`` undefined) as a frame of ``columns`` (default every
        declared column any row has, in declared order, then the others in row order),
        each declared column in its dtype whatever the values."""
        import pandas as pd

        if columns is None:
            seen = dict.fromkeys(name for row in rows for name in row)
            columns = [c for c in self.columns if c in seen] + [c for c in seen if c not in self.columns]
        out = pd.DataFrame(list(rows), columns=list(columns))
        for name, dtype in self.dtypes(columns, extra).items():
            try:  # through object: None and NaN alike become the dtype's undefined value
                out[name] = out[name].astype(object).astype(PANDAS_DTYPES[dtype])
            except (TypeError, ValueError) as exc:
                raise ValueError(f"table {self.name!r}: column {name!r}: its values are not {dtype}: {exc}") from None
        return out

    def read_csv(self, path: str | os.PathLike[str] | IO[bytes], extra: Mapping[str, Dtype] | None = None) -> pd.DataFrame:
        """A CSV table of this kind as a frame (:func:`read_csv`): declared columns in their
        dtypes, others as pandas infers them."""
        import pandas as pd

        try:
            header = list(pd.read_csv(path, nrows=0).columns)
        except (OSError, ValueError) as exc:
            raise TableError(f"{path}: cannot read the {self.name} table: {exc}") from None
        if hasattr(path, "seek"):
            path.seek(0)
        return read_csv(path, self.dtypes(header, extra))
