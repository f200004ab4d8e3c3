"""The guard against row images that would decode to far more than the file holds."""

from __future__ import annotations

import pytest

import vecbinlog
import vecbinlog.decode.rows

from .conftest import DATA


def test_cell_budget_refuses_amplification(monkeypatch):
    sample = DATA / "sample" / "mariadb-bin.000001"
    # the sample's orders table: 7 row images x 5 columns = 35 cells
    assert vecbinlog.read_table(sample, "shop.orders").num_rows == 7
    monkeypatch.setattr(vecbinlog.decode.rows, "MAX_CELLS_PER_BYTE", 0)
    monkeypatch.setattr(vecbinlog.decode.rows, "MIN_CELLS_BUDGET", 30)
    with pytest.raises(vecbinlog.MalformedEventError, match="more than 30 cells") as err:
        vecbinlog.read_table(sample, "shop.orders")
    assert err.value.event_type.endswith("ROWS_EVENT_V1") and err.value.offset > 0
