"""ui/elements/tables.py: tables handed to st.dataframe as Arrow, typed as pandas' conversion would type them."""

import math

import numpy as np
import pandas as pd
import pyarrow as pa

from tests.app.helpers import app, assert_clean
from ui.elements import tables


def test_rows_become_typed_arrow_columns_with_nan_as_null():
    t = tables.arrow([{"model": "a", "x [×]": 2.5, "n": 3}, {"model": "b", "x [×]": math.nan, "n": 4}])
    assert isinstance(t, pa.Table) and t.column_names == ["model", "x [×]", "n"]
    assert t.column("model").to_pylist() == ["a", "b"]
    assert t.column("x [×]").to_pylist() == [2.5, None]            # NaN → null, as pa.Table.from_pandas
    assert t.column("n").type == pa.int64()
    # the same as Streamlit's own pandas → Arrow conversion, value for value
    ref = pa.Table.from_pandas(pd.DataFrame([{"model": "a", "x [×]": 2.5, "n": 3},
                                             {"model": "b", "x [×]": math.nan, "n": 4}]), preserve_index=False)
    assert ref.column("x [×]").to_pylist() == t.column("x [×]").to_pylist()


def test_columns_of_numpy_arrays_and_an_untypable_column_falls_back_to_pandas():
    t = tables.arrow({"C": ["8 (now)", "16"], "t [ms]": np.array([1.5, np.nan]), "fits": np.array([True, False])})
    assert t.column("t [ms]").to_pylist() == [1.5, None] and t.column("fits").to_pylist() == [True, False]
    mixed = tables.arrow([{"v": 1.0}, {"v": "n/a"}])                  # text and numbers in one column
    assert isinstance(mixed, pd.DataFrame) and list(mixed.v) == [1.0, "n/a"]
    assert tables.arrow([]).num_columns == 0


def test_the_prices_table_reads_back_as_before():
    at = app(page="prices")
    at.session_state["pr_table_open"] = True       # section 5's table sits in a lazy expander: open it
    at.run()
    assert_clean(at)
    df = next(d.value for d in at.dataframe if "implied KV [B/token]" in d.value.columns)
    assert len(df) >= 5 and df["model"].map(type).eq(str).all()
    assert df["out ÷ in [×]"].dtype.kind == "f" and (df["out ÷ in [×]"] > 0).all()
