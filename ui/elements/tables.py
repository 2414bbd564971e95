"""Tables for `st.dataframe`, handed over as Arrow tables.

Why: given a pandas DataFrame, Streamlit converts it to Arrow on every rerun (`pa.Table.from_pandas`,
≈2 ms for a 30-row table with text columns on the CI-class machine: most of it pandas' own string
arrays); an Arrow table built straight from the rows or columns costs ≈0.2 ms and is sent as it is
(bench: the Prices page draws two, the Fast mode page two).  Floats' NaN become nulls as pandas'
conversion makes them (the grid shows an empty cell, not "NaN").  Anything pyarrow cannot type
(a column mixing text and numbers) falls back to the pandas path, so the table is drawn either way.
An Arrow table has no index: for tables drawn with `hide_index=True`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import streamlit as st


def arrow(data: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> pa.Table | pd.DataFrame:
    """An Arrow table of `data` (columns by name, or rows as dicts with the same keys), NaN as null;
    the pandas DataFrame of it if pyarrow cannot type a column."""
    if isinstance(data, Mapping):
        cols = dict(data)
    else:
        rows = list(data)
        names = list(rows[0]) if rows else []
        cols = {k: [r.get(k) for r in rows] for k in names}
    try:
        return pa.table({k: pa.array(v, from_pandas=True) for k, v in cols.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return pd.DataFrame(cols)


def dataframe(data: Mapping[str, Any] | Sequence[Mapping[str, Any]], **kwargs: Any) -> Any:
    """`st.dataframe(arrow(data), hide_index=True, **kwargs)`."""
    return st.dataframe(arrow(data), hide_index=True, **kwargs)
