"""MySQL's binary JSON read independently of vecbinlog into Python values, compared with the
JSON text vecbinlog prints, and partial-update diffs applied to them (tests/decode/test_json.py,
tests/decode/test_partial_json.py, tests/test_corpus.py)."""

from __future__ import annotations

import base64
import json
import re
import struct
from decimal import Decimal

from . import reference as ref


# -- an independent reading of the binary into Python values, for json.loads comparison ----
def parse_binary(doc: bytes):
    """The document as Python values: objects as lists of (key, value) pairs in stored
    order, opaque values as the strings/numbers MySQL shows (decimals via the reference
    decoder's decode_decimal, temporal values from their packed fields)."""
    if not doc:
        return None
    return _value(doc[0], doc, 1)


def _value(t, doc, p):
    """The value of type ``t`` at ``doc[p:]``."""
    if t in (0, 1, 2, 3):
        large = t & 1
        fmt, osz = ("<I", 4) if large else ("<H", 2)
        count = struct.unpack_from(fmt, doc, p)[0]
        keys = []
        e = p + 2 * osz
        if t < 2:
            for i in range(count):
                ko = struct.unpack_from(fmt, doc, e)[0]
                kl = struct.unpack_from("<H", doc, e + osz)[0]
                keys.append(doc[p + ko : p + ko + kl].decode())
                e += osz + 2
        vals = []
        for i in range(count):
            vt = doc[e]
            raw = doc[e + 1 : e + 1 + osz]
            if vt == 4:
                vals.append((None, True, False)[raw[0]])
            elif vt in (5, 6):
                vals.append(int.from_bytes(raw[:2], "little", signed=vt == 5))
            elif vt in (7, 8) and large:
                vals.append(int.from_bytes(raw[:4], "little", signed=vt == 7))
            else:
                vals.append(_value(vt, doc, p + int.from_bytes(raw, "little")))
            e += 1 + osz
        return list(zip(keys, vals)) if t < 2 else vals
    if t == 4:
        return (None, True, False)[doc[p]]
    if t in (5, 6, 7, 8, 9, 10):
        n = {5: 2, 6: 2, 7: 4, 8: 4, 9: 8, 10: 8}[t]
        return int.from_bytes(doc[p : p + n], "little", signed=t in (5, 7, 9))
    if t == 11:
        return struct.unpack_from("<d", doc, p)[0]
    n, h = 0, 0
    q = p + 1 if t == 15 else p
    while True:
        b = doc[q + h]
        n |= (b & 0x7F) << (7 * h)
        h += 1
        if not b & 0x80:
            break
    data = doc[q + h : q + h + n]
    if t == 12:
        return data.decode()
    ftype = doc[p]
    if ftype == 246:
        return Decimal(ref.decode_decimal(data[2:], data[0], data[1]))
    if ftype in (7, 10, 11, 12):
        packed = struct.unpack("<q", data)[0]
        neg, packed = packed < 0, abs(packed)
        us, whole = packed % (1 << 24), packed >> 24
        if ftype == 11:
            return "%s%02d:%02d:%02d.%06d" % ("-" if neg else "", whole >> 12, whole >> 6 & 63, whole & 63, us)
        ymd, hms = whole >> 17, whole & ((1 << 17) - 1)
        date = "%04d-%02d-%02d" % ((ymd >> 5) // 13, (ymd >> 5) % 13, ymd & 31)
        if ftype == 10:
            return date
        return date + " %02d:%02d:%02d.%06d" % (hms >> 12, hms >> 6 & 63, hms & 63, us)
    if ftype == 253:
        return data.decode()
    # MIME base64: a line break every 76 characters (encodebytes adds one at the end too)
    return "base64:type%d:%s" % (ftype, base64.encodebytes(data).decode().rstrip("\n"))


def same_json(expected, got) -> bool:
    """Structure equality: objects as ordered pairs, numbers by value (doubles exactly)."""
    if isinstance(expected, list) and expected and all(isinstance(x, tuple) for x in expected) or (
        isinstance(got, list) and got and all(isinstance(x, tuple) for x in got)
    ):
        return (
            isinstance(got, list)
            and len(got) == len(expected)
            and all(isinstance(g, tuple) and g[0] == e[0] and same_json(e[1], g[1]) for e, g in zip(expected, got))
        )
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(map(same_json, expected, got))
    if expected is None or isinstance(expected, bool):
        return got is expected
    if isinstance(expected, int):
        return type(got) is int and got == expected
    if isinstance(expected, float):
        return isinstance(got, Decimal) and float(got) == expected and ("." in str(got) or "E" in str(got))
    if isinstance(expected, Decimal):
        return isinstance(got, Decimal) and str(got) == str(expected)
    return got == expected


def loads(text: str):
    """json.loads keeping object member order (pairs) and every non-integer number exact."""
    return json.loads(text, object_pairs_hook=lambda pairs: list(pairs) or [], parse_float=Decimal)


class JsonText:
    """Compares equal to a string when the string is MySQL JSON text for this binary value."""

    def __init__(self, raw: bytes):
        self.raw = raw
        self.value = parse_binary(raw)

    def __eq__(self, other):
        return isinstance(other, str) and same_json(self.value, loads(other))

    def __repr__(self):
        return f"JsonText({self.raw.hex()} = {self.value!r})"


# -- an independent applier of partial-update diffs over parse_binary values ---------------
def _legs(path: str) -> list:
    """$.name, $."quoted name", $[n] (all the tests and the corpus use)."""
    legs, i = [], 1
    while i < len(path):
        if path.startswith('."', i):
            name, i = json.JSONDecoder().raw_decode(path, i + 1)
            legs.append(name)
        elif path[i] == ".":
            name = re.match(r"[^.\[]+", path[i + 1 :]).group()
            legs.append(name)
            i += 1 + len(name)
        else:
            j = path.index("]", i)
            legs.append(int(path[i + 1 : j]))
            i = j + 1
    return legs


def apply_json_diffs(value, diffs):
    """JSON_REPLACE/JSON_INSERT/JSON_REMOVE semantics on parse_binary values (objects as
    lists of (key, value) pairs, kept sorted by key length then bytes as MySQL stores them);
    ``diffs``: (operation byte, path, binary value or None) as the reference decoder gives."""
    for op, path, raw in diffs:
        *up, last = _legs(path)
        parent = value
        for leg in up:
            parent = dict(parent)[leg] if isinstance(leg, str) else parent[leg]
        new = None if raw is None else parse_binary(raw)
        if isinstance(last, int):
            if op == 1:
                parent.insert(min(last, len(parent)), new)
            elif op == 2:
                del parent[last]
            else:
                parent[last] = new
            continue
        keys = [k for k, _ in parent]
        if op == 2:
            del parent[keys.index(last)]
        elif op == 0:
            parent[keys.index(last)] = (last, new)
        else:
            parent.append((last, new))
            parent.sort(key=lambda kv: (len(kv[0].encode()), kv[0].encode()))
    return value
