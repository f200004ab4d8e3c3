"""The seed documents' hex dumps of real events, written out as test vectors (so that the tests
reading them need neither the seeds nor the corpus): tests/tables/test_table_map.py decodes
them, tests/test_builder.py rebuilds them byte for byte."""

from __future__ import annotations

#: 001_021ea0c9ad600c84.txt: `xxd -s 620 -l 68 binlog.000024`, presentation.person
PERSON = bytes.fromhex(
    "3210 3568 1301 0000 0044 0000 00b0 0200 0000 005f 0000 0000 0001 000c 7072 6573"
    "656e 7461 7469 6f6e 0006 7065 7273 6f6e 0002 030f 0258 0202 0101 0002 03fc ff00"
    "fba8 d0d8".replace(" ", "")
)
#: 004_bf7358eaf922e1bf.txt: the `darren`.`t` event, field by field
DARREN = bytes.fromhex(
    "212e0e5b" "13" "5c276b94" "2e000000" "aa010000" "0000"
    "b10100000000" "0100" "06" "64617272656e" "00" "01" "74" "00" "01" "03" "00" "00" "8fcb077d"
)
#: 000_ae06dc76b7a39a2d.txt: `test`.`t4` "at 892", as printed (one byte contradicts the CRC)
T4_PRINTED = bytes.fromhex(
    "d4 e5 27 5a 13 8c 27 00 00 2d 00 00 00 7c 03 00 00 00 00 21 00 00 00 00 00 01 00 04 74 65 73 74"
    " 00 02 74 34 00 01 03 01 01 05 6b 3c be".replace(" ", "")
)
#: T4_PRINTED's wrong byte: the field-metadata length, 0x01 printed, 0x00 by the CRC (a LONG has no metadata)
T4_BAD_BYTE = 39
