"""A value-at-a-time reference of what ``cat`` and the CSV exports print (vecbinlog.cli.text and
cli.lines), written from the documented rules (tests/cli/test_text.py; tests/tables/test_ddl.py
checks the text of a table whose layout changes with it)."""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import io
import json
import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vecbinlog.cli.lines import CsvText, JsonLinesText, TableText
from vecbinlog.cli.text import column_text


def time_text(td: dt.timedelta) -> str:
    """A TIME value as MySQL prints it: [-]HH:MM:SS[.ffffff]."""
    us = td // dt.timedelta(microseconds=1)
    sign, us = ("-" if us < 0 else ""), abs(us)
    s, frac = divmod(us, 10**6)
    return f"{sign}{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}" + (f".{frac:06d}" if frac else "")


def float_text(v: float, typ: pa.DataType) -> str:
    """Arrow's own text of a float (the one oracle taken from Arrow: the shortest digits)."""
    return pc.cast(pa.array([v], typ), pa.string())[0].as_py()


def ref_text(v, typ: pa.DataType, style: str) -> str:
    """The text of one value in ``style`` ("json", "table" or "csv"), as documented."""
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    if v is None:
        return {"json": "null", "table": "NULL", "csv": ""}[style]
    quote = (lambda s: '"' + s.replace('"', '""') + '"') if style == "csv" else (lambda s: s)
    if isinstance(v, bool):
        return ("True" if v else "False") if style == "table" else ("true" if v else "false")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = float_text(v, typ)
        return json.dumps(text) if style == "json" and not np.isfinite(v) else text
    if isinstance(v, decimal.Decimal):
        return json.dumps(format(v, "f")) if style == "json" else format(v, "f")
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False) if style == "json" else quote(v)
    if isinstance(v, bytes):
        return {"json": f'"{v.hex()}"', "table": "0x" + v.hex(), "csv": f'"{v.hex()}"'}[style]
    if isinstance(v, dt.datetime):
        if style == "csv":
            return f"{v.year:04d}-{v:%m-%d %H:%M:%S.%f}" + ("Z" if v.tzinfo else "")  # Arrow's text
        return json.dumps(v.isoformat()) if style == "json" else v.isoformat()
    if isinstance(v, dt.date):
        return json.dumps(v.isoformat()) if style == "json" else v.isoformat()
    if isinstance(v, dt.timedelta):
        return json.dumps(time_text(v)) if style == "json" else quote(time_text(v)) if style == "csv" else time_text(v)
    if isinstance(v, list):
        return quote("[" + ", ".join(ref_text(x, typ.value_type, "json") for x in v) + "]")
    if isinstance(v, dict):
        fields = {f.name: f.type for f in typ}
        return quote("{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {ref_text(x, fields[k], 'json')}"
                                     for k, x in v.items()) + "}")
    raise TypeError(type(v))


def ref_width(s: str) -> int:
    """Columns ``s`` takes on a terminal: wide characters 2, combining ones 0."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def ref_cut(s: str, wd: int) -> str:
    """``s`` with its line breaks and tabs escaped, cut to ``wd`` columns with an ellipsis (None: never cut)."""
    s = s.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    if wd is None or ref_width(s) <= wd:
        return s
    out, used = [], 0
    for ch in s:
        w = ref_width(ch)
        if used + w > wd - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def ref_table(batches: list[pa.RecordBatch], max_width: int) -> str:
    """The aligned table as documented: widths from the first batch's first 1000 rows (a
    dictionary column: its widest entry, used or not), at most max_width for text, text cut at
    its column's width (never with max_width 0: a wider cell pushes the rest of its line),
    numbers never cut and right-aligned, a new header for a new layout."""
    out, names, widths, right = [], None, [], []
    numeric = lambda t: pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)  # noqa: E731
    for b in batches:
        cells = [[ref_text(v, c.type, "table") for v in c.to_pylist()] for c in b.columns]
        if b.schema.names != names:
            if names is not None:
                out.append("")
            names = b.schema.names
            right = [numeric(t) for t in b.schema.types]
            widths = []
            for name, col, r, t in zip(names, cells, right, b.schema.types):
                wd = max([ref_width(name)] + [ref_width(ref_cut(s, None)) for s in col[:1000]])
                if pa.types.is_dictionary(t):  # every entry, used in the first rows or not
                    entries = b.column(name).dictionary.to_pylist()
                    wd = max([wd] + [ref_width(ref_cut(ref_text(v, t, "table"), None)) for v in entries])
                widths.append(min(wd, max_width) if max_width and not r else wd)
            out.append("  ".join(ref_cut(n, wd) + " " * (wd - ref_width(ref_cut(n, wd))) for n, wd in zip(names, widths)).rstrip())
            out.append("  ".join("-" * wd for wd in widths))
        for row in zip(*cells):
            parts = []
            for s, wd, r in zip(row, widths, right):
                s = ref_cut(s, None if r or not max_width else wd)  # 0: never cut
                pad = " " * max(wd - ref_width(s), 0)
                parts.append(pad + s if r else s + pad)
            out.append("  ".join(parts).rstrip())
    return "".join(line + "\n" for line in out)


def ours(writer, batches: list[pa.RecordBatch]) -> str:
    """What ``writer`` writes for ``batches``, a batch at a time (``write``, as ``events`` and
    the CSV files do); the same text must come out streamed (``write_all``, as ``cat`` does:
    chunks of later batches formatted while earlier ones are written, across layout changes)."""
    def with_headers(items):
        names = None
        for b in items:
            if isinstance(writer, CsvText) and b.schema.names != names:
                yield writer.header(b.schema.names)
                names = b.schema.names
            yield b

    fresh = copy.deepcopy(writer)  # as it is before the batches
    buf = io.BytesIO()
    for item in with_headers(batches):
        buf.write(item) if isinstance(item, bytes) else writer.write(item, buf)
    streamed = io.BytesIO()
    fresh.write_all(with_headers(batches), streamed)
    assert streamed.getvalue() == buf.getvalue()
    return buf.getvalue().decode()


def check_all_styles(batches: list[pa.RecordBatch], max_widths=(40, 7, 0)) -> None:
    """Every column's text and the JSON lines, CSV and table (each of ``max_widths``) writers' text
    of ``batches`` equal the reference's."""
    for b in batches:
        for col in b.columns:
            for style in ("json", "table", "csv"):
                got = column_text(col, style)
                got = [got.as_py()] * len(col) if isinstance(got, pa.Scalar) else got.to_pylist()
                assert got == [ref_text(v, col.type, style) for v in col.to_pylist()], (col.type, style)
    expected_json = "".join(
        "{" + ", ".join(f"{json.dumps(n, ensure_ascii=False)}: {ref_text(v, t, 'json')}" for n, t, v in
                        zip(b.schema.names, b.schema.types, row.values())) + "}\n"
        for b in batches for row in b.to_pylist())
    assert ours(JsonLinesText(), batches) == expected_json
    for line in expected_json.splitlines():
        json.loads(line)
    csv_lines, names = [], None
    for b in batches:
        if b.schema.names != names:
            names = b.schema.names
            csv_lines.append(",".join('"' + n.replace('"', '""') + '"' for n in names))
        csv_lines += [",".join(ref_text(v, t, "csv") for t, v in zip(b.schema.types, row.values())) for row in b.to_pylist()]
    assert ours(CsvText(), batches) == "".join(line + "\n" for line in csv_lines)
    for mw in max_widths:
        assert ours(TableText(mw), batches) == ref_table(batches, mw), mw
