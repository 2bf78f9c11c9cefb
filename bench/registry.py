"""Every bench row, with the machines it runs on: bench/rows.py's own (ROWS), then
issue 23's call rows (bench/checked_rows.py: each says where it runs), the launch rows
(bench/launch_rows.py) and the driver API's rows (bench/driver_rows.py). Those modules
build on rows.py's helpers; gathering them here, not in rows.py, keeps the imports one
way."""

from __future__ import annotations

from collections.abc import Callable

from . import checked_rows, driver_rows, launch_rows, rows
from .rows import Context, Row


def all_rows() -> list[tuple[frozenset, Callable[[Context], Row | list[Row]]]]:
    gpu = frozenset({"gpu"})
    return (
        rows.ROWS + checked_rows.ROWS + [(gpu, row) for row in launch_rows.ROWS + driver_rows.ROWS]
    )
