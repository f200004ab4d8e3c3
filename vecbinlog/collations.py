"""Collation id -> character set -> Python codec, for MySQL and MariaDB binary logs.

TABLE_MAP events name a column's character set only through a collation id (optional metadata
DEFAULT_CHARSET, COLUMN_CHARSET, ENUM_AND_SET_DEFAULT_CHARSET, ENUM_AND_SET_COLUMN_CHARSET).
This module turns such an id into the server's character set name (:func:`charset_for`) and the
character set into the Python codec, or exact byte table, that decodes it (:func:`codec_for`,
:func:`decode_table_for`, :func:`decode_text`).

Where the data comes from
-------------------------
MariaDB (10.x, 11.x)
    A live MariaDB 10.11.19 server: ``SELECT ID, COLLATION_NAME, CHARACTER_SET_NAME FROM
    information_schema.COLLATIONS`` (322 rows with an id) and, for the UCA 14.0.0 collations whose
    COLLATIONS row has ``ID = NULL``, ``SELECT FULL_COLLATION_NAME, CHARACTER_SET_NAME, ID FROM
    information_schema.COLLATION_CHARACTER_SET_APPLICABILITY`` (10.10+; 920 ``*_uca1400_*``
    ids 2048-3271).  The ``utf8mb4_*_0900_*`` aliases of MariaDB 11.4.5+ (MDEV-20912) come from
    MariaDB's ``strings/ctype-uca0900.c`` (``mysql_0900_mapping``, ids counted from 255) and
    ``mysql-test/main/ctype_utf8mb4_0900.result``.  ``tests/tables/test_collations.py`` re-checks every
    id against a live server.
MySQL (5.x, 8.0, 8.4, 9.x)
    mysql-server ``share/charsets/Index.xml`` and ``strings/ctype-*.cc`` as listed by MySQL
    Connector/J ``com/mysql/cj/CharsetMapping.java`` (the complete collation table Oracle ships
    with its driver, ids 1-323): ids 1-247 as in MariaDB (same charsets; MySQL names five of the
    croatian collations differently), 76 ``utf8mb3_tolower_ci``, 248-250 ``gb18030`` (5.7.4+),
    255-323 ``utf8mb4_*_0900_*`` (8.0; 310-323 since 8.0.30).

Collation *names* are today's: MySQL 8.0.30+ and MariaDB 10.6.1+ say ``utf8mb3_general_ci`` where
older servers said ``utf8_general_ci``; the id and the character set did not change.

Conflicts: no id means one character set in MySQL and another in MariaDB.  Both define the ids
1-247 MariaDB has (same character sets; five names differ: 122, 149, 181, 213, 245 are
``*_croatian_ci`` in MySQL and ``*_croatian_mysql561_ci`` in MariaDB) and the 0900 ids MariaDB
11.4.5+ took over from MySQL; every other id exists in one server only (MySQL: 76, 248-250 and
the 0900 ids MariaDB has no alias for; MariaDB: 576-738, 1025-1270, 2048-3271).
:data:`CONFLICTING_IDS` is computed, not typed, and is empty.

Character sets -> Python
------------------------
Every non-Unicode character set of MariaDB 10.11 was compared with Python's codecs through the
live server (``CONVERT(... USING utf32)`` of every byte, of every 2-byte sequence 0x81-0xFF x
0x40-0xFF and of every 0x8E/0x8F-led sequence); the single-byte tables were also compared with
mysql-server's ``share/charsets/<charset>.xml`` ``<unicode>`` maps (identical).  MySQL's
gb18030, which MariaDB lacks, was not measured.

``latin1`` is MySQL's cp1252 variant from ``strings/ctype-latin1.cc`` (``cs_to_uni``, MariaDB's
``ctype-latin1.c`` is the same): Windows-1252, except that the five bytes Windows leaves
undefined, 0x81 0x8D 0x8F 0x90 0x9D, decode to the C1 controls U+0081 U+008D U+008F U+0090
U+009D ("like ISO-8859-1 does. Otherwise, loading mysqldump output doesn't reproduce these
undefined characters").  Python's cp1252 rejects those bytes, hence
:data:`MYSQL_LATIN1_DECODE_TABLE`.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = [
    "COLLATIONS",
    "MYSQL_COLLATIONS",
    "MARIADB_COLLATIONS",
    "UTF8MB4_0900",
    "CONFLICTING_IDS",
    "CHARSET_ALIASES",
    "CHARSET_CODECS",
    "SINGLE_BYTE_DECODE_TABLES",
    "MYSQL_LATIN1_DECODE_TABLE",
    "UNMAPPED",
    "FLAVORS",
    "charset_for",
    "collation_for",
    "collation_id",
    "codec_for",
    "decode_table_for",
    "decode_text",
]

FLAVORS = ("mysql", "mariadb")

# ---------------------------------------------------------------------------------------------
# Collations both servers define with the same id, name and character set.
# (MySQL 5.x/8.0 before 8.0.30 and MariaDB before 10.6.1 spell utf8mb3 as "utf8".)
# ---------------------------------------------------------------------------------------------

COLLATIONS: dict[int, tuple[str, str]] = {
    1: ("big5_chinese_ci", "big5"),
    2: ("latin2_czech_cs", "latin2"),
    3: ("dec8_swedish_ci", "dec8"),
    4: ("cp850_general_ci", "cp850"),
    5: ("latin1_german1_ci", "latin1"),
    6: ("hp8_english_ci", "hp8"),
    7: ("koi8r_general_ci", "koi8r"),
    8: ("latin1_swedish_ci", "latin1"),
    9: ("latin2_general_ci", "latin2"),
    10: ("swe7_swedish_ci", "swe7"),
    11: ("ascii_general_ci", "ascii"),
    12: ("ujis_japanese_ci", "ujis"),
    13: ("sjis_japanese_ci", "sjis"),
    14: ("cp1251_bulgarian_ci", "cp1251"),
    15: ("latin1_danish_ci", "latin1"),
    16: ("hebrew_general_ci", "hebrew"),
    18: ("tis620_thai_ci", "tis620"),
    19: ("euckr_korean_ci", "euckr"),
    20: ("latin7_estonian_cs", "latin7"),
    21: ("latin2_hungarian_ci", "latin2"),
    22: ("koi8u_general_ci", "koi8u"),
    23: ("cp1251_ukrainian_ci", "cp1251"),
    24: ("gb2312_chinese_ci", "gb2312"),
    25: ("greek_general_ci", "greek"),
    26: ("cp1250_general_ci", "cp1250"),
    27: ("latin2_croatian_ci", "latin2"),
    28: ("gbk_chinese_ci", "gbk"),
    29: ("cp1257_lithuanian_ci", "cp1257"),
    30: ("latin5_turkish_ci", "latin5"),
    31: ("latin1_german2_ci", "latin1"),
    32: ("armscii8_general_ci", "armscii8"),
    33: ("utf8mb3_general_ci", "utf8mb3"),
    34: ("cp1250_czech_cs", "cp1250"),
    35: ("ucs2_general_ci", "ucs2"),
    36: ("cp866_general_ci", "cp866"),
    37: ("keybcs2_general_ci", "keybcs2"),
    38: ("macce_general_ci", "macce"),
    39: ("macroman_general_ci", "macroman"),
    40: ("cp852_general_ci", "cp852"),
    41: ("latin7_general_ci", "latin7"),
    42: ("latin7_general_cs", "latin7"),
    43: ("macce_bin", "macce"),
    44: ("cp1250_croatian_ci", "cp1250"),
    45: ("utf8mb4_general_ci", "utf8mb4"),
    46: ("utf8mb4_bin", "utf8mb4"),
    47: ("latin1_bin", "latin1"),
    48: ("latin1_general_ci", "latin1"),
    49: ("latin1_general_cs", "latin1"),
    50: ("cp1251_bin", "cp1251"),
    51: ("cp1251_general_ci", "cp1251"),
    52: ("cp1251_general_cs", "cp1251"),
    53: ("macroman_bin", "macroman"),
    54: ("utf16_general_ci", "utf16"),
    55: ("utf16_bin", "utf16"),
    56: ("utf16le_general_ci", "utf16le"),
    57: ("cp1256_general_ci", "cp1256"),
    58: ("cp1257_bin", "cp1257"),
    59: ("cp1257_general_ci", "cp1257"),
    60: ("utf32_general_ci", "utf32"),
    61: ("utf32_bin", "utf32"),
    62: ("utf16le_bin", "utf16le"),
    63: ("binary", "binary"),
    64: ("armscii8_bin", "armscii8"),
    65: ("ascii_bin", "ascii"),
    66: ("cp1250_bin", "cp1250"),
    67: ("cp1256_bin", "cp1256"),
    68: ("cp866_bin", "cp866"),
    69: ("dec8_bin", "dec8"),
    70: ("greek_bin", "greek"),
    71: ("hebrew_bin", "hebrew"),
    72: ("hp8_bin", "hp8"),
    73: ("keybcs2_bin", "keybcs2"),
    74: ("koi8r_bin", "koi8r"),
    75: ("koi8u_bin", "koi8u"),
    77: ("latin2_bin", "latin2"),
    78: ("latin5_bin", "latin5"),
    79: ("latin7_bin", "latin7"),
    80: ("cp850_bin", "cp850"),
    81: ("cp852_bin", "cp852"),
    82: ("swe7_bin", "swe7"),
    83: ("utf8mb3_bin", "utf8mb3"),
    84: ("big5_bin", "big5"),
    85: ("euckr_bin", "euckr"),
    86: ("gb2312_bin", "gb2312"),
    87: ("gbk_bin", "gbk"),
    88: ("sjis_bin", "sjis"),
    89: ("tis620_bin", "tis620"),
    90: ("ucs2_bin", "ucs2"),
    91: ("ujis_bin", "ujis"),
    92: ("geostd8_general_ci", "geostd8"),
    93: ("geostd8_bin", "geostd8"),
    94: ("latin1_spanish_ci", "latin1"),
    95: ("cp932_japanese_ci", "cp932"),
    96: ("cp932_bin", "cp932"),
    97: ("eucjpms_japanese_ci", "eucjpms"),
    98: ("eucjpms_bin", "eucjpms"),
    99: ("cp1250_polish_ci", "cp1250"),
    101: ("utf16_unicode_ci", "utf16"),
    102: ("utf16_icelandic_ci", "utf16"),
    103: ("utf16_latvian_ci", "utf16"),
    104: ("utf16_romanian_ci", "utf16"),
    105: ("utf16_slovenian_ci", "utf16"),
    106: ("utf16_polish_ci", "utf16"),
    107: ("utf16_estonian_ci", "utf16"),
    108: ("utf16_spanish_ci", "utf16"),
    109: ("utf16_swedish_ci", "utf16"),
    110: ("utf16_turkish_ci", "utf16"),
    111: ("utf16_czech_ci", "utf16"),
    112: ("utf16_danish_ci", "utf16"),
    113: ("utf16_lithuanian_ci", "utf16"),
    114: ("utf16_slovak_ci", "utf16"),
    115: ("utf16_spanish2_ci", "utf16"),
    116: ("utf16_roman_ci", "utf16"),
    117: ("utf16_persian_ci", "utf16"),
    118: ("utf16_esperanto_ci", "utf16"),
    119: ("utf16_hungarian_ci", "utf16"),
    120: ("utf16_sinhala_ci", "utf16"),
    121: ("utf16_german2_ci", "utf16"),
    123: ("utf16_unicode_520_ci", "utf16"),
    124: ("utf16_vietnamese_ci", "utf16"),
    128: ("ucs2_unicode_ci", "ucs2"),
    129: ("ucs2_icelandic_ci", "ucs2"),
    130: ("ucs2_latvian_ci", "ucs2"),
    131: ("ucs2_romanian_ci", "ucs2"),
    132: ("ucs2_slovenian_ci", "ucs2"),
    133: ("ucs2_polish_ci", "ucs2"),
    134: ("ucs2_estonian_ci", "ucs2"),
    135: ("ucs2_spanish_ci", "ucs2"),
    136: ("ucs2_swedish_ci", "ucs2"),
    137: ("ucs2_turkish_ci", "ucs2"),
    138: ("ucs2_czech_ci", "ucs2"),
    139: ("ucs2_danish_ci", "ucs2"),
    140: ("ucs2_lithuanian_ci", "ucs2"),
    141: ("ucs2_slovak_ci", "ucs2"),
    142: ("ucs2_spanish2_ci", "ucs2"),
    143: ("ucs2_roman_ci", "ucs2"),
    144: ("ucs2_persian_ci", "ucs2"),
    145: ("ucs2_esperanto_ci", "ucs2"),
    146: ("ucs2_hungarian_ci", "ucs2"),
    147: ("ucs2_sinhala_ci", "ucs2"),
    148: ("ucs2_german2_ci", "ucs2"),
    150: ("ucs2_unicode_520_ci", "ucs2"),
    151: ("ucs2_vietnamese_ci", "ucs2"),
    159: ("ucs2_general_mysql500_ci", "ucs2"),
    160: ("utf32_unicode_ci", "utf32"),
    161: ("utf32_icelandic_ci", "utf32"),
    162: ("utf32_latvian_ci", "utf32"),
    163: ("utf32_romanian_ci", "utf32"),
    164: ("utf32_slovenian_ci", "utf32"),
    165: ("utf32_polish_ci", "utf32"),
    166: ("utf32_estonian_ci", "utf32"),
    167: ("utf32_spanish_ci", "utf32"),
    168: ("utf32_swedish_ci", "utf32"),
    169: ("utf32_turkish_ci", "utf32"),
    170: ("utf32_czech_ci", "utf32"),
    171: ("utf32_danish_ci", "utf32"),
    172: ("utf32_lithuanian_ci", "utf32"),
    173: ("utf32_slovak_ci", "utf32"),
    174: ("utf32_spanish2_ci", "utf32"),
    175: ("utf32_roman_ci", "utf32"),
    176: ("utf32_persian_ci", "utf32"),
    177: ("utf32_esperanto_ci", "utf32"),
    178: ("utf32_hungarian_ci", "utf32"),
    179: ("utf32_sinhala_ci", "utf32"),
    180: ("utf32_german2_ci", "utf32"),
    182: ("utf32_unicode_520_ci", "utf32"),
    183: ("utf32_vietnamese_ci", "utf32"),
    192: ("utf8mb3_unicode_ci", "utf8mb3"),
    193: ("utf8mb3_icelandic_ci", "utf8mb3"),
    194: ("utf8mb3_latvian_ci", "utf8mb3"),
    195: ("utf8mb3_romanian_ci", "utf8mb3"),
    196: ("utf8mb3_slovenian_ci", "utf8mb3"),
    197: ("utf8mb3_polish_ci", "utf8mb3"),
    198: ("utf8mb3_estonian_ci", "utf8mb3"),
    199: ("utf8mb3_spanish_ci", "utf8mb3"),
    200: ("utf8mb3_swedish_ci", "utf8mb3"),
    201: ("utf8mb3_turkish_ci", "utf8mb3"),
    202: ("utf8mb3_czech_ci", "utf8mb3"),
    203: ("utf8mb3_danish_ci", "utf8mb3"),
    204: ("utf8mb3_lithuanian_ci", "utf8mb3"),
    205: ("utf8mb3_slovak_ci", "utf8mb3"),
    206: ("utf8mb3_spanish2_ci", "utf8mb3"),
    207: ("utf8mb3_roman_ci", "utf8mb3"),
    208: ("utf8mb3_persian_ci", "utf8mb3"),
    209: ("utf8mb3_esperanto_ci", "utf8mb3"),
    210: ("utf8mb3_hungarian_ci", "utf8mb3"),
    211: ("utf8mb3_sinhala_ci", "utf8mb3"),
    212: ("utf8mb3_german2_ci", "utf8mb3"),
    214: ("utf8mb3_unicode_520_ci", "utf8mb3"),
    215: ("utf8mb3_vietnamese_ci", "utf8mb3"),
    223: ("utf8mb3_general_mysql500_ci", "utf8mb3"),
    224: ("utf8mb4_unicode_ci", "utf8mb4"),
    225: ("utf8mb4_icelandic_ci", "utf8mb4"),
    226: ("utf8mb4_latvian_ci", "utf8mb4"),
    227: ("utf8mb4_romanian_ci", "utf8mb4"),
    228: ("utf8mb4_slovenian_ci", "utf8mb4"),
    229: ("utf8mb4_polish_ci", "utf8mb4"),
    230: ("utf8mb4_estonian_ci", "utf8mb4"),
    231: ("utf8mb4_spanish_ci", "utf8mb4"),
    232: ("utf8mb4_swedish_ci", "utf8mb4"),
    233: ("utf8mb4_turkish_ci", "utf8mb4"),
    234: ("utf8mb4_czech_ci", "utf8mb4"),
    235: ("utf8mb4_danish_ci", "utf8mb4"),
    236: ("utf8mb4_lithuanian_ci", "utf8mb4"),
    237: ("utf8mb4_slovak_ci", "utf8mb4"),
    238: ("utf8mb4_spanish2_ci", "utf8mb4"),
    239: ("utf8mb4_roman_ci", "utf8mb4"),
    240: ("utf8mb4_persian_ci", "utf8mb4"),
    241: ("utf8mb4_esperanto_ci", "utf8mb4"),
    242: ("utf8mb4_hungarian_ci", "utf8mb4"),
    243: ("utf8mb4_sinhala_ci", "utf8mb4"),
    244: ("utf8mb4_german2_ci", "utf8mb4"),
    246: ("utf8mb4_unicode_520_ci", "utf8mb4"),
    247: ("utf8mb4_vietnamese_ci", "utf8mb4"),
}

# ---------------------------------------------------------------------------------------------
# MySQL only.  Source: Connector/J CharsetMapping.java (mirrors mysql-server share/charsets/
# Index.xml, strings/ctype-utf8.cc, ctype-gb18030.cc, ctype-uca.cc); 0900 ids since 8.0.1,
# 310-323 since 8.0.30; 272, 276, 295, 299 (fa, si), 301, 302 and 251-254 are unassigned.
# ---------------------------------------------------------------------------------------------

UTF8MB4_0900: dict[int, tuple[str, str]] = {
    255: ("utf8mb4_0900_ai_ci", "utf8mb4"),
    256: ("utf8mb4_de_pb_0900_ai_ci", "utf8mb4"),
    257: ("utf8mb4_is_0900_ai_ci", "utf8mb4"),
    258: ("utf8mb4_lv_0900_ai_ci", "utf8mb4"),
    259: ("utf8mb4_ro_0900_ai_ci", "utf8mb4"),
    260: ("utf8mb4_sl_0900_ai_ci", "utf8mb4"),
    261: ("utf8mb4_pl_0900_ai_ci", "utf8mb4"),
    262: ("utf8mb4_et_0900_ai_ci", "utf8mb4"),
    263: ("utf8mb4_es_0900_ai_ci", "utf8mb4"),
    264: ("utf8mb4_sv_0900_ai_ci", "utf8mb4"),
    265: ("utf8mb4_tr_0900_ai_ci", "utf8mb4"),
    266: ("utf8mb4_cs_0900_ai_ci", "utf8mb4"),
    267: ("utf8mb4_da_0900_ai_ci", "utf8mb4"),
    268: ("utf8mb4_lt_0900_ai_ci", "utf8mb4"),
    269: ("utf8mb4_sk_0900_ai_ci", "utf8mb4"),
    270: ("utf8mb4_es_trad_0900_ai_ci", "utf8mb4"),
    271: ("utf8mb4_la_0900_ai_ci", "utf8mb4"),
    273: ("utf8mb4_eo_0900_ai_ci", "utf8mb4"),
    274: ("utf8mb4_hu_0900_ai_ci", "utf8mb4"),
    275: ("utf8mb4_hr_0900_ai_ci", "utf8mb4"),
    277: ("utf8mb4_vi_0900_ai_ci", "utf8mb4"),
    278: ("utf8mb4_0900_as_cs", "utf8mb4"),
    279: ("utf8mb4_de_pb_0900_as_cs", "utf8mb4"),
    280: ("utf8mb4_is_0900_as_cs", "utf8mb4"),
    281: ("utf8mb4_lv_0900_as_cs", "utf8mb4"),
    282: ("utf8mb4_ro_0900_as_cs", "utf8mb4"),
    283: ("utf8mb4_sl_0900_as_cs", "utf8mb4"),
    284: ("utf8mb4_pl_0900_as_cs", "utf8mb4"),
    285: ("utf8mb4_et_0900_as_cs", "utf8mb4"),
    286: ("utf8mb4_es_0900_as_cs", "utf8mb4"),
    287: ("utf8mb4_sv_0900_as_cs", "utf8mb4"),
    288: ("utf8mb4_tr_0900_as_cs", "utf8mb4"),
    289: ("utf8mb4_cs_0900_as_cs", "utf8mb4"),
    290: ("utf8mb4_da_0900_as_cs", "utf8mb4"),
    291: ("utf8mb4_lt_0900_as_cs", "utf8mb4"),
    292: ("utf8mb4_sk_0900_as_cs", "utf8mb4"),
    293: ("utf8mb4_es_trad_0900_as_cs", "utf8mb4"),
    294: ("utf8mb4_la_0900_as_cs", "utf8mb4"),
    296: ("utf8mb4_eo_0900_as_cs", "utf8mb4"),
    297: ("utf8mb4_hu_0900_as_cs", "utf8mb4"),
    298: ("utf8mb4_hr_0900_as_cs", "utf8mb4"),
    300: ("utf8mb4_vi_0900_as_cs", "utf8mb4"),
    303: ("utf8mb4_ja_0900_as_cs", "utf8mb4"),
    304: ("utf8mb4_ja_0900_as_cs_ks", "utf8mb4"),
    305: ("utf8mb4_0900_as_ci", "utf8mb4"),
    306: ("utf8mb4_ru_0900_ai_ci", "utf8mb4"),
    307: ("utf8mb4_ru_0900_as_cs", "utf8mb4"),
    308: ("utf8mb4_zh_0900_as_cs", "utf8mb4"),
    309: ("utf8mb4_0900_bin", "utf8mb4"),
    310: ("utf8mb4_nb_0900_ai_ci", "utf8mb4"),
    311: ("utf8mb4_nb_0900_as_cs", "utf8mb4"),
    312: ("utf8mb4_nn_0900_ai_ci", "utf8mb4"),
    313: ("utf8mb4_nn_0900_as_cs", "utf8mb4"),
    314: ("utf8mb4_sr_latn_0900_ai_ci", "utf8mb4"),
    315: ("utf8mb4_sr_latn_0900_as_cs", "utf8mb4"),
    316: ("utf8mb4_bs_0900_ai_ci", "utf8mb4"),
    317: ("utf8mb4_bs_0900_as_cs", "utf8mb4"),
    318: ("utf8mb4_bg_0900_ai_ci", "utf8mb4"),
    319: ("utf8mb4_bg_0900_as_cs", "utf8mb4"),
    320: ("utf8mb4_gl_0900_ai_ci", "utf8mb4"),
    321: ("utf8mb4_gl_0900_as_cs", "utf8mb4"),
    322: ("utf8mb4_mn_cyrl_0900_ai_ci", "utf8mb4"),
    323: ("utf8mb4_mn_cyrl_0900_as_cs", "utf8mb4"),
}

_MYSQL_ONLY: dict[int, tuple[str, str]] = {
    76: ("utf8mb3_tolower_ci", "utf8mb3"),  # 8.0: the data dictionary's identifier collation
    122: ("utf16_croatian_ci", "utf16"),  # MariaDB: utf16_croatian_mysql561_ci
    149: ("ucs2_croatian_ci", "ucs2"),  # MariaDB: ucs2_croatian_mysql561_ci
    181: ("utf32_croatian_ci", "utf32"),  # MariaDB: utf32_croatian_mysql561_ci
    213: ("utf8mb3_croatian_ci", "utf8mb3"),  # MariaDB: utf8mb3_croatian_mysql561_ci
    245: ("utf8mb4_croatian_ci", "utf8mb4"),  # MariaDB: utf8mb4_croatian_mysql561_ci
    248: ("gb18030_chinese_ci", "gb18030"),  # 5.7.4+
    249: ("gb18030_bin", "gb18030"),
    250: ("gb18030_unicode_520_ci", "gb18030"),
}

# ---------------------------------------------------------------------------------------------
# MariaDB only.  Source: information_schema.COLLATIONS of MariaDB 10.11.19.
# 122-245: same ids and charsets as MySQL, which calls them *_croatian_ci (see _MYSQL_ONLY);
# 576-738: croatian_ci, myanmar_ci, thai_520_w2 of the five Unicode charsets (UCA 5.2.0, 10.0+);
# 1024 + n: the NO PAD twin of collation n (10.2+).
# ---------------------------------------------------------------------------------------------

_MARIADB_ONLY: dict[int, tuple[str, str]] = {
    122: ("utf16_croatian_mysql561_ci", "utf16"),
    149: ("ucs2_croatian_mysql561_ci", "ucs2"),
    181: ("utf32_croatian_mysql561_ci", "utf32"),
    213: ("utf8mb3_croatian_mysql561_ci", "utf8mb3"),
    245: ("utf8mb4_croatian_mysql561_ci", "utf8mb4"),
    576: ("utf8mb3_croatian_ci", "utf8mb3"),
    577: ("utf8mb3_myanmar_ci", "utf8mb3"),
    578: ("utf8mb3_thai_520_w2", "utf8mb3"),
    608: ("utf8mb4_croatian_ci", "utf8mb4"),
    609: ("utf8mb4_myanmar_ci", "utf8mb4"),
    610: ("utf8mb4_thai_520_w2", "utf8mb4"),
    640: ("ucs2_croatian_ci", "ucs2"),
    641: ("ucs2_myanmar_ci", "ucs2"),
    642: ("ucs2_thai_520_w2", "ucs2"),
    672: ("utf16_croatian_ci", "utf16"),
    673: ("utf16_myanmar_ci", "utf16"),
    674: ("utf16_thai_520_w2", "utf16"),
    736: ("utf32_croatian_ci", "utf32"),
    737: ("utf32_myanmar_ci", "utf32"),
    738: ("utf32_thai_520_w2", "utf32"),
    1025: ("big5_chinese_nopad_ci", "big5"),
    1027: ("dec8_swedish_nopad_ci", "dec8"),
    1028: ("cp850_general_nopad_ci", "cp850"),
    1030: ("hp8_english_nopad_ci", "hp8"),
    1031: ("koi8r_general_nopad_ci", "koi8r"),
    1032: ("latin1_swedish_nopad_ci", "latin1"),
    1033: ("latin2_general_nopad_ci", "latin2"),
    1034: ("swe7_swedish_nopad_ci", "swe7"),
    1035: ("ascii_general_nopad_ci", "ascii"),
    1036: ("ujis_japanese_nopad_ci", "ujis"),
    1037: ("sjis_japanese_nopad_ci", "sjis"),
    1040: ("hebrew_general_nopad_ci", "hebrew"),
    1042: ("tis620_thai_nopad_ci", "tis620"),
    1043: ("euckr_korean_nopad_ci", "euckr"),
    1046: ("koi8u_general_nopad_ci", "koi8u"),
    1048: ("gb2312_chinese_nopad_ci", "gb2312"),
    1049: ("greek_general_nopad_ci", "greek"),
    1050: ("cp1250_general_nopad_ci", "cp1250"),
    1052: ("gbk_chinese_nopad_ci", "gbk"),
    1054: ("latin5_turkish_nopad_ci", "latin5"),
    1056: ("armscii8_general_nopad_ci", "armscii8"),
    1057: ("utf8mb3_general_nopad_ci", "utf8mb3"),
    1059: ("ucs2_general_nopad_ci", "ucs2"),
    1060: ("cp866_general_nopad_ci", "cp866"),
    1061: ("keybcs2_general_nopad_ci", "keybcs2"),
    1062: ("macce_general_nopad_ci", "macce"),
    1063: ("macroman_general_nopad_ci", "macroman"),
    1064: ("cp852_general_nopad_ci", "cp852"),
    1065: ("latin7_general_nopad_ci", "latin7"),
    1067: ("macce_nopad_bin", "macce"),
    1069: ("utf8mb4_general_nopad_ci", "utf8mb4"),
    1070: ("utf8mb4_nopad_bin", "utf8mb4"),
    1071: ("latin1_nopad_bin", "latin1"),
    1074: ("cp1251_nopad_bin", "cp1251"),
    1075: ("cp1251_general_nopad_ci", "cp1251"),
    1077: ("macroman_nopad_bin", "macroman"),
    1078: ("utf16_general_nopad_ci", "utf16"),
    1079: ("utf16_nopad_bin", "utf16"),
    1080: ("utf16le_general_nopad_ci", "utf16le"),
    1081: ("cp1256_general_nopad_ci", "cp1256"),
    1082: ("cp1257_nopad_bin", "cp1257"),
    1083: ("cp1257_general_nopad_ci", "cp1257"),
    1084: ("utf32_general_nopad_ci", "utf32"),
    1085: ("utf32_nopad_bin", "utf32"),
    1086: ("utf16le_nopad_bin", "utf16le"),
    1088: ("armscii8_nopad_bin", "armscii8"),
    1089: ("ascii_nopad_bin", "ascii"),
    1090: ("cp1250_nopad_bin", "cp1250"),
    1091: ("cp1256_nopad_bin", "cp1256"),
    1092: ("cp866_nopad_bin", "cp866"),
    1093: ("dec8_nopad_bin", "dec8"),
    1094: ("greek_nopad_bin", "greek"),
    1095: ("hebrew_nopad_bin", "hebrew"),
    1096: ("hp8_nopad_bin", "hp8"),
    1097: ("keybcs2_nopad_bin", "keybcs2"),
    1098: ("koi8r_nopad_bin", "koi8r"),
    1099: ("koi8u_nopad_bin", "koi8u"),
    1101: ("latin2_nopad_bin", "latin2"),
    1102: ("latin5_nopad_bin", "latin5"),
    1103: ("latin7_nopad_bin", "latin7"),
    1104: ("cp850_nopad_bin", "cp850"),
    1105: ("cp852_nopad_bin", "cp852"),
    1106: ("swe7_nopad_bin", "swe7"),
    1107: ("utf8mb3_nopad_bin", "utf8mb3"),
    1108: ("big5_nopad_bin", "big5"),
    1109: ("euckr_nopad_bin", "euckr"),
    1110: ("gb2312_nopad_bin", "gb2312"),
    1111: ("gbk_nopad_bin", "gbk"),
    1112: ("sjis_nopad_bin", "sjis"),
    1113: ("tis620_nopad_bin", "tis620"),
    1114: ("ucs2_nopad_bin", "ucs2"),
    1115: ("ujis_nopad_bin", "ujis"),
    1116: ("geostd8_general_nopad_ci", "geostd8"),
    1117: ("geostd8_nopad_bin", "geostd8"),
    1119: ("cp932_japanese_nopad_ci", "cp932"),
    1120: ("cp932_nopad_bin", "cp932"),
    1121: ("eucjpms_japanese_nopad_ci", "eucjpms"),
    1122: ("eucjpms_nopad_bin", "eucjpms"),
    1125: ("utf16_unicode_nopad_ci", "utf16"),
    1147: ("utf16_unicode_520_nopad_ci", "utf16"),
    1152: ("ucs2_unicode_nopad_ci", "ucs2"),
    1174: ("ucs2_unicode_520_nopad_ci", "ucs2"),
    1184: ("utf32_unicode_nopad_ci", "utf32"),
    1206: ("utf32_unicode_520_nopad_ci", "utf32"),
    1216: ("utf8mb3_unicode_nopad_ci", "utf8mb3"),
    1238: ("utf8mb3_unicode_520_nopad_ci", "utf8mb3"),
    1248: ("utf8mb4_unicode_nopad_ci", "utf8mb4"),
    1270: ("utf8mb4_unicode_520_nopad_ci", "utf8mb4"),
}

# MariaDB 10.10+ UCA 14.0.0 collations (utf8mb4_uca1400_ai_ci is the default utf8mb4 collation
# of recent 11.x servers).  Their information_schema.COLLATIONS rows carry the charset-less
# name ("uca1400_ai_ci") and ID NULL;
# the ids binlogs carry are in COLLATION_CHARACTER_SET_APPLICABILITY and follow
#   id = charset base + 8 * tailoring + 4 * nopad + 2 * accent_sensitive + 1 * case_sensitive
#   name = charset + "_uca1400" [+ "_" + tailoring] [+ "_nopad"] + "_ai"|"_as" + "_ci"|"_cs"
# Tailorings 21 and 22 are unused (the slots of croatian_mysql561 and unicode_520 in the older
# 192 + n numbering).  Checked id by id against MariaDB 10.11.19.
_UCA1400_CHARSET_BASE: dict[str, int] = {
    "utf8mb3": 2048,
    "utf8mb4": 2304,
    "ucs2": 2560,
    "utf16": 2816,
    "utf32": 3072,
}
_UCA1400_TAILORINGS: dict[int, str] = {
    0: "",
    1: "icelandic",
    2: "latvian",
    3: "romanian",
    4: "slovenian",
    5: "polish",
    6: "estonian",
    7: "spanish",
    8: "swedish",
    9: "turkish",
    10: "czech",
    11: "danish",
    12: "lithuanian",
    13: "slovak",
    14: "spanish2",
    15: "roman",
    16: "persian",
    17: "esperanto",
    18: "hungarian",
    19: "sinhala",
    20: "german2",
    23: "vietnamese",
    24: "croatian",
}


def _uca1400_collations() -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for charset, base in _UCA1400_CHARSET_BASE.items():
        for index, tailoring in _UCA1400_TAILORINGS.items():
            for flags in range(8):
                name = charset + "_uca1400"
                if tailoring:
                    name += "_" + tailoring
                if flags & 4:
                    name += "_nopad"
                name += ("_as" if flags & 2 else "_ai") + ("_cs" if flags & 1 else "_ci")
                out[base + 8 * index + flags] = (name, charset)
    return out


# MariaDB 11.4.5+ (MDEV-20912) accepts MySQL's utf8mb4_*_0900_* names under MySQL's ids, as
# aliases of utf8mb4_uca1400_*_nopad_* (and 309 of utf8mb4_nopad_bin): ctype-uca0900.c leaves out
# fa, si, ja, ru, zh and MySQL 8.0.30's additions (310-323).
_MARIADB_0900_ALIAS_IDS: tuple[int, ...] = (
    *range(255, 272), 273, 274, 275, 277,
    *range(278, 295), 296, 297, 298, 300,
    305, 309,
)

MYSQL_COLLATIONS: dict[int, tuple[str, str]] = dict(
    sorted({**COLLATIONS, **_MYSQL_ONLY, **UTF8MB4_0900}.items())
)
MARIADB_COLLATIONS: dict[int, tuple[str, str]] = dict(
    sorted(
        {
            **COLLATIONS,
            **_MARIADB_ONLY,
            **{i: UTF8MB4_0900[i] for i in _MARIADB_0900_ALIAS_IDS},
            **_uca1400_collations(),
        }.items()
    )
)

#: Ids the two servers assign to different character sets (none; kept so a future table
#: change that introduces one shows up).
CONFLICTING_IDS: frozenset[int] = frozenset(
    i for i in MYSQL_COLLATIONS.keys() & MARIADB_COLLATIONS.keys()
    if MYSQL_COLLATIONS[i][1] != MARIADB_COLLATIONS[i][1]
)

_BY_FLAVOR: dict[str, dict[int, tuple[str, str]]] = {
    "mysql": MYSQL_COLLATIONS,
    "mariadb": MARIADB_COLLATIONS,
}

# ---------------------------------------------------------------------------------------------
# Character set -> Python codec
# ---------------------------------------------------------------------------------------------

#: Older names of the same character set (MySQL < 8.0.30, MariaDB < 10.6.1 say "utf8").
CHARSET_ALIASES: dict[str, str] = {"utf8": "utf8mb3"}

#: MySQL/MariaDB character set -> the nearest Python codec; None: no Python codec (use
#: :data:`SINGLE_BYTE_DECODE_TABLES`) or no text at all (binary).  "exact" below means: every
#: byte sequence the server decodes, Python decodes to the same code point, and vice versa
#: (measured on MariaDB 10.11 for all 1-, 2- and 0x8E/0x8F-led 3-byte sequences).  Where a
#: charset has an entry in SINGLE_BYTE_DECODE_TABLES, that table is exact and wins.
CHARSET_CODECS: dict[str, str | None] = {
    # --- Unicode --------------------------------------------------------------------------
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",  # BMP only (<= 3 bytes per character); valid UTF-8 either way
    "ucs2": "utf-16-be",  # BMP only, big-endian, no surrogates
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    # ASCII is decoded as UTF-8 (a strict superset, so ASCII data passes through unchanged).
    # The server itself maps bytes 0x80-0xFF of an ascii column to '?' (codec "ascii" would
    # reject them instead).
    "ascii": "utf-8",
    "binary": None,  # BINARY/VARBINARY/BLOB and id 63: bytes, never text
    # --- Western / Central / Eastern European, single byte --------------------------------
    # MySQL's latin1 is cp1252 plus the 5 C1 controls 0x81 0x8D 0x8F 0x90 0x9D, which Python's
    # cp1252 rejects: decode with MYSQL_LATIN1_DECODE_TABLE.
    "latin1": "cp1252",
    "latin2": "iso8859_2",  # exact
    "latin5": "iso8859_9",  # exact
    "latin7": "iso8859_13",  # exact
    "cp1250": "cp1250",  # exact
    "cp1251": "cp1251",  # exact
    "cp1257": "cp1257",  # exact
    "cp850": "cp850",  # exact
    "cp852": "cp852",  # exact
    "macce": "mac_latin2",  # exact (Python's Mac Central European; alias mac_centeuro)
    "macroman": "mac_roman",  # exact
    "hp8": "hp_roman8",  # exact
    # dec8 (DEC Multinational): no Python codec.  latin_1 differs at 19 bytes: 0xA8 U+00A4,
    # 0xD7 U+0152, 0xDD U+0178, 0xF7 U+0153, 0xFD U+00FF, and 14 bytes the server leaves
    # unmapped.  Use SINGLE_BYTE_DECODE_TABLES["dec8"].
    "dec8": None,
    # swe7 (7-bit Swedish, ISO 646-SE): no Python codec.  ascii differs at @ [ \ ] ^ ` { | } ~
    # (É Ä Ö Å Ü é ä ö å ü) and 0x7F; 0x80-0xFF are unmapped.  Use the table.
    "swe7": None,
    # keybcs2 (Kamenicky, Czech/Slovak DOS): no Python codec; cp437/cp861 differ at ~30 of
    # 0x80-0xAB.  Use the table.
    "keybcs2": None,
    # --- Cyrillic -------------------------------------------------------------------------
    "koi8r": "koi8_r",  # exact
    # koi8u: Python's koi8_u differs at one byte: 0x95 is U+2022 BULLET in MySQL, U+2219 in
    # Python.  The table is exact.
    "koi8u": "koi8_u",
    # cp866: Python's cp866 differs at two bytes: 0xFC is U+207F (MySQL) vs U+2116 (Python),
    # 0xFD is U+00B2 (MySQL) vs U+00A4 (Python).  The table is exact.
    "cp866": "cp866",
    # --- Greek, Hebrew, Arabic, Thai, Armenian, Georgian ----------------------------------
    # greek: MySQL keeps ISO-8859-7:1987: 0xA1/0xA2 are U+02BD/U+02BC (Python: U+2018/U+2019)
    # and 0xA4 0xA5 0xAA (the 2003 additions € ₯ ͺ that Python decodes) are unmapped.  Table.
    "greek": "iso8859_7",
    # hebrew: 0xAF is U+203E OVERLINE in MySQL, U+00AF MACRON in Python.  Table.
    "hebrew": "iso8859_8",
    # cp1256: MySQL has the pre-1998 Windows-1256 table; Python additionally decodes 8 bytes
    # MySQL leaves unmapped (0x8A 0x8F 0x98 0x9A 0x9F 0xAA 0xC0 0xFF: ٹ ڈ ک ڑ ں ھ ہ ے).  All
    # bytes MySQL maps decode identically, so Python's codec is kept (a superset).
    "cp1256": "cp1256",
    # tis620: exact for every byte MySQL maps (MySQL turns 0xA0 0xDB-0xDE 0xFC-0xFF into U+FFFD,
    # Python rejects them).
    "tis620": "tis_620",
    "armscii8": None,  # ARMSCII-8 (Armenian): no Python codec.  Table.
    "geostd8": None,  # GEOSTD8 (Georgian): no Python codec.  Table.
    # --- East Asian, multi-byte -----------------------------------------------------------
    # big5: Python's big5 agrees on all 13703 other sequences; it lacks the 7 ETEN extension
    # characters 0xF9D6-0xF9DC (碁銹裏墻恒粧嫺) MySQL decodes, and decodes 7 codes MySQL turns
    # into U+FFFD (0xA15A 0xA1C3 0xA1C5 0xA1FE 0xA240 0xA2CC 0xA2CE).  cp950 and big5hkscs
    # differ more.
    "big5": "big5",
    "gb2312": "gb2312",  # exact (EUC-CN)
    "gbk": "gbk",  # exact (== cp936)
    # gb18030 (MySQL 5.7.4+ only; MariaDB has none): MySQL implements GB 18030-2005; Python's
    # codec follows the 2000 mapping for the one pair 2005 swapped (0xA8BC: U+1E3F in 2005,
    # U+E7C7 in Python; 0x8135F437 the other way round).  Not checked against a live server.
    "gb18030": "gb18030",
    # euckr: MySQL's euckr is Microsoft's UHC (cp949), a superset of EUC-KR (17048 sequences
    # vs 8225): exact with cp949; euc_kr would reject the 8823 extension syllables.
    "euckr": "cp949",
    "cp932": "cp932",  # exact (Windows-31J)
    # sjis: exact but for 0x815F, which MySQL decodes to U+005C REVERSE SOLIDUS and Python to
    # U+FF3C FULLWIDTH REVERSE SOLIDUS.
    "sjis": "shift_jis",
    # ujis (EUC-JP): exact but for 0xA1C0 (MySQL U+005C, Python U+FF3C); the user-defined rows
    # 0xF5A1-0xFEFE and 0x8FF5A1-0x8FFEFE (1880 codes, Unicode private use U+E000-U+E757 in
    # MySQL) are rejected by Python.
    "ujis": "euc_jp",
    # eucjpms (eucJP-ms): no Python codec; euc_jp is the closest (euc_jis_2004 differs at ~2000
    # codes).  8 codes decode to the JIS variants instead of the Microsoft ones (MySQL first):
    # 0xA1C1 U+FF5E/U+301C, 0xA1C2 U+2225/U+2016, 0xA1DD U+FF0D/U+2212, 0xA1F1 U+FFE0/U+00A2,
    # 0xA1F2 U+FFE1/U+00A3, 0xA2CC U+FFE2/U+00AC, 0x8FA2B7 U+FF5E/U+007E, 0x8FA2C3 U+FFE4/U+00A6;
    # 2069 codes Python rejects: NEC row 13 (0xAD..), IBM extensions (0x8FF3F3-0x8FF4FE) and the
    # user-defined rows (private use).
    "eucjpms": "euc_jp",
}

#: What a decode table holds for a byte the server maps to no character (the server itself
#: turns such bytes into '?' when converting).
UNMAPPED = "\ufffd"

# Upper parts (from the first non-ASCII row to 0xFF) of the single-byte tables that Python has
# no exact codec for, 16 code points per row, 0000 = unmapped.  latin1: strings/ctype-latin1.cc
# cs_to_uni; the others: the <unicode> map of mysql-server share/charsets/<charset>.xml (MariaDB
# has the same files).  Bytes below the first row decode as ASCII.
_SINGLE_BYTE_ROWS: dict[str, tuple[int, str]] = {
    "latin1": (0x80, """
        20AC 0081 201A 0192 201E 2026 2020 2021 02C6 2030 0160 2039 0152 008D 017D 008F
        0090 2018 2019 201C 201D 2022 2013 2014 02DC 2122 0161 203A 0153 009D 017E 0178
        00A0 00A1 00A2 00A3 00A4 00A5 00A6 00A7 00A8 00A9 00AA 00AB 00AC 00AD 00AE 00AF
        00B0 00B1 00B2 00B3 00B4 00B5 00B6 00B7 00B8 00B9 00BA 00BB 00BC 00BD 00BE 00BF
        00C0 00C1 00C2 00C3 00C4 00C5 00C6 00C7 00C8 00C9 00CA 00CB 00CC 00CD 00CE 00CF
        00D0 00D1 00D2 00D3 00D4 00D5 00D6 00D7 00D8 00D9 00DA 00DB 00DC 00DD 00DE 00DF
        00E0 00E1 00E2 00E3 00E4 00E5 00E6 00E7 00E8 00E9 00EA 00EB 00EC 00ED 00EE 00EF
        00F0 00F1 00F2 00F3 00F4 00F5 00F6 00F7 00F8 00F9 00FA 00FB 00FC 00FD 00FE 00FF
    """),
    "dec8": (0x80, """
        0080 0081 0082 0083 0084 0085 0086 0087 0088 0089 008A 008B 008C 008D 008E 008F
        0090 0091 0092 0093 0094 0095 0096 0097 0098 0099 009A 009B 009C 009D 009E 009F
        00A0 00A1 00A2 00A3 0000 00A5 0000 00A7 00A4 00A9 00AA 00AB 0000 0000 0000 0000
        00B0 00B1 00B2 00B3 0000 00B5 00B6 00B7 0000 00B9 00BA 00BB 00BC 00BD 0000 00BF
        00C0 00C1 00C2 00C3 00C4 00C5 00C6 00C7 00C8 00C9 00CA 00CB 00CC 00CD 00CE 00CF
        0000 00D1 00D2 00D3 00D4 00D5 00D6 0152 00D8 00D9 00DA 00DB 00DC 0178 0000 00DF
        00E0 00E1 00E2 00E3 00E4 00E5 00E6 00E7 00E8 00E9 00EA 00EB 00EC 00ED 00EE 00EF
        0000 00F1 00F2 00F3 00F4 00F5 00F6 0153 00F8 00F9 00FA 00FB 00FC 00FF 0000 0000
    """),
    "swe7": (0x40, """
        00C9 0041 0042 0043 0044 0045 0046 0047 0048 0049 004A 004B 004C 004D 004E 004F
        0050 0051 0052 0053 0054 0055 0056 0057 0058 0059 005A 00C4 00D6 00C5 00DC 005F
        00E9 0061 0062 0063 0064 0065 0066 0067 0068 0069 006A 006B 006C 006D 006E 006F
        0070 0071 0072 0073 0074 0075 0076 0077 0078 0079 007A 00E4 00F6 00E5 00FC 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
    """),
    "keybcs2": (0x80, """
        010C 00FC 00E9 010F 00E4 010E 0164 010D 011B 011A 0139 00CD 013E 013A 00C4 00C1
        00C9 017E 017D 00F4 00F6 00D3 016F 00DA 00FD 00D6 00DC 0160 013D 00DD 0158 0165
        00E1 00ED 00F3 00FA 0148 0147 016E 00D4 0161 0159 0155 0154 00BC 00A1 00AB 00BB
        2591 2592 2593 2502 2524 2561 2562 2556 2555 2563 2551 2557 255D 255C 255B 2510
        2514 2534 252C 251C 2500 253C 255E 255F 255A 2554 2569 2566 2560 2550 256C 2567
        2568 2564 2565 2559 2558 2552 2553 256B 256A 2518 250C 2588 2584 258C 2590 2580
        03B1 00DF 0393 03C0 03A3 03C3 00B5 03C4 03A6 0398 03A9 03B4 221E 03C6 03B5 2229
        2261 00B1 2265 2264 2320 2321 00F7 2248 00B0 2219 00B7 221A 207F 00B2 25A0 00A0
    """),
    "armscii8": (0x80, """
        0080 0081 0082 0083 0084 0085 0086 0087 0088 0089 008A 008B 008C 008D 008E 008F
        0090 0091 0092 0093 0094 0095 0096 0097 0098 0099 009A 009B 009C 009D 009E 009F
        00A0 2741 00A7 0589 0029 0028 00BB 00AB 2014 002E 055D 002C 002D 055F 2026 055C
        055B 055E 0531 0561 0532 0562 0533 0563 0534 0564 0535 0565 0536 0566 0537 0567
        0538 0568 0539 0569 053A 056A 053B 056B 053C 056C 053D 056D 053E 056E 053F 056F
        0540 0570 0541 0571 0542 0572 0543 0573 0544 0574 0545 0575 0546 0576 0547 0577
        0548 0578 0549 0579 054A 057A 054B 057B 054C 057C 054D 057D 054E 057E 054F 057F
        0550 0580 0551 0581 0552 0582 0553 0583 0554 0584 0555 0585 0556 0586 2019 0027
    """),
    "geostd8": (0x80, """
        20AC 0000 201A 0000 201E 2026 2020 2021 0000 2030 0000 2039 0000 0000 0000 0000
        0000 2018 2019 201C 201D 2022 2013 2014 0000 0000 0000 203A 0000 0000 0000 0000
        00A0 00A1 00A2 00A3 00A4 00A5 00A6 00A7 00A8 00A9 00AA 00AB 00AC 00AD 00AE 00AF
        00B0 00B1 00B2 00B3 00B4 00B5 00B6 00B7 00B8 00B9 00BA 00BB 00BC 00BD 00BE 00BF
        10D0 10D1 10D2 10D3 10D4 10D5 10D6 10F1 10D7 10D8 10D9 10DA 10DB 10DC 10F2 10DD
        10DE 10DF 10E0 10E1 10E2 10F3 10E3 10E4 10E5 10E6 10E7 10E8 10E9 10EA 10EB 10EC
        10ED 10EE 10F4 10EF 10F0 10F5 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 2116 0000 0000
    """),
    "greek": (0x80, """
        0080 0081 0082 0083 0084 0085 0086 0087 0088 0089 008A 008B 008C 008D 008E 008F
        0090 0091 0092 0093 0094 0095 0096 0097 0098 0099 009A 009B 009C 009D 009E 009F
        00A0 02BD 02BC 00A3 0000 0000 00A6 00A7 00A8 00A9 0000 00AB 00AC 00AD 0000 2015
        00B0 00B1 00B2 00B3 0384 0385 0386 00B7 0388 0389 038A 00BB 038C 00BD 038E 038F
        0390 0391 0392 0393 0394 0395 0396 0397 0398 0399 039A 039B 039C 039D 039E 039F
        03A0 03A1 0000 03A3 03A4 03A5 03A6 03A7 03A8 03A9 03AA 03AB 03AC 03AD 03AE 03AF
        03B0 03B1 03B2 03B3 03B4 03B5 03B6 03B7 03B8 03B9 03BA 03BB 03BC 03BD 03BE 03BF
        03C0 03C1 03C2 03C3 03C4 03C5 03C6 03C7 03C8 03C9 03CA 03CB 03CC 03CD 03CE 0000
    """),
    "hebrew": (0x80, """
        0080 0081 0082 0083 0084 0085 0086 0087 0088 0089 008A 008B 008C 008D 008E 008F
        0090 0091 0092 0093 0094 0095 0096 0097 0098 0099 009A 009B 009C 009D 009E 009F
        00A0 0000 00A2 00A3 00A4 00A5 00A6 00A7 00A8 00A9 00D7 00AB 00AC 00AD 00AE 203E
        00B0 00B1 00B2 00B3 00B4 00B5 00B6 00B7 00B8 00B9 00F7 00BB 00BC 00BD 00BE 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000
        0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 2017
        05D0 05D1 05D2 05D3 05D4 05D5 05D6 05D7 05D8 05D9 05DA 05DB 05DC 05DD 05DE 05DF
        05E0 05E1 05E2 05E3 05E4 05E5 05E6 05E7 05E8 05E9 05EA 0000 0000 200E 200F 0000
    """),
    "koi8u": (0x80, """
        2500 2502 250C 2510 2514 2518 251C 2524 252C 2534 253C 2580 2584 2588 258C 2590
        2591 2592 2593 2320 25A0 2022 221A 2248 2264 2265 00A0 2321 00B0 00B2 00B7 00F7
        2550 2551 2552 0451 0454 2554 0456 0457 2557 2558 2559 255A 255B 0491 255D 255E
        255F 2560 2561 0401 0404 2563 0406 0407 2566 2567 2568 2569 256A 0490 256C 00A9
        044E 0430 0431 0446 0434 0435 0444 0433 0445 0438 0439 043A 043B 043C 043D 043E
        043F 044F 0440 0441 0442 0443 0436 0432 044C 044B 0437 0448 044D 0449 0447 044A
        042E 0410 0411 0426 0414 0415 0424 0413 0425 0418 0419 041A 041B 041C 041D 041E
        041F 042F 0420 0421 0422 0423 0416 0412 042C 042B 0417 0428 042D 0429 0427 042A
    """),
    "cp866": (0x80, """
        0410 0411 0412 0413 0414 0415 0416 0417 0418 0419 041A 041B 041C 041D 041E 041F
        0420 0421 0422 0423 0424 0425 0426 0427 0428 0429 042A 042B 042C 042D 042E 042F
        0430 0431 0432 0433 0434 0435 0436 0437 0438 0439 043A 043B 043C 043D 043E 043F
        2591 2592 2593 2502 2524 2561 2562 2556 2555 2563 2551 2557 255D 255C 255B 2510
        2514 2534 252C 251C 2500 253C 255E 255F 255A 2554 2569 2566 2560 2550 256C 2567
        2568 2564 2565 2559 2558 2552 2553 256B 256A 2518 250C 2588 2584 258C 2590 2580
        0440 0441 0442 0443 0444 0445 0446 0447 0448 0449 044A 044B 044C 044D 044E 044F
        0401 0451 0404 0454 0407 0457 040E 045E 00B0 2219 00B7 221A 207F 00B2 25A0 00A0
    """),
}


def _build_table(start: int, rows: str) -> str:
    points = [int(word, 16) for word in rows.split()]
    if start + len(points) != 256:
        raise AssertionError(f"table rows cover {start:#x}+{len(points)} bytes, not up to 0xFF")
    return "".join(chr(b) for b in range(start)) + "".join(
        chr(cp) if cp else UNMAPPED for cp in points
    )


#: charset -> 256-character str: what byte b of that charset means (UNMAPPED where the server
#: maps b to nothing).  For the single-byte charsets Python has no exact codec for; decode with
#: ``np.frombuffer(table.encode("utf-32-le"), "<u4")[codes]`` or :func:`decode_text`.
SINGLE_BYTE_DECODE_TABLES: dict[str, str] = {
    charset: _build_table(start, rows) for charset, (start, rows) in _SINGLE_BYTE_ROWS.items()
}

#: MySQL/MariaDB latin1: cp1252, with 0x81 0x8D 0x8F 0x90 0x9D -> U+0081 U+008D U+008F U+0090
#: U+009D (strings/ctype-latin1.cc, cs_to_uni).  No byte is unmapped.
MYSQL_LATIN1_DECODE_TABLE: str = SINGLE_BYTE_DECODE_TABLES["latin1"]

# str.translate maps from latin-1-decoded text (U+0000-U+00FF, one per byte) to the table.
_TRANSLATIONS: dict[str, dict[int, str]] = {
    charset: {b: ch for b, ch in enumerate(table) if ch != chr(b)}
    for charset, table in SINGLE_BYTE_DECODE_TABLES.items()
}


# ---------------------------------------------------------------------------------------------
# Look-ups
# ---------------------------------------------------------------------------------------------


def _flavor_table(flavor: str) -> dict[int, tuple[str, str]]:
    try:
        return _BY_FLAVOR[flavor.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"flavor must be one of {FLAVORS}, not {flavor!r}") from None


def collation_for(collation_id: int, flavor: str = "mysql") -> tuple[str, str] | None:
    """(collation name, charset name) of a collation id, or None when the server has no such id."""
    return _flavor_table(flavor).get(collation_id)


def charset_for(collation_id: int, flavor: str = "mysql") -> str | None:
    """Character set of collation ``collation_id`` on ``flavor`` ("mysql" or "mariadb").

    None for ids the server does not define (the decoder then keeps the bytes).
    """
    entry = _flavor_table(flavor).get(collation_id)
    return None if entry is None else entry[1]


@lru_cache(maxsize=None)
def _ids_by_name(flavor: str) -> tuple[dict[str, int], dict[str, int]]:
    """collation name -> id, and charset -> its smallest collation id, for one flavour."""
    by_name: dict[str, int] = {}
    by_charset: dict[str, int] = {}
    for cid, (name, charset) in sorted(_flavor_table(flavor).items()):
        by_name.setdefault(name.lower(), cid)
        by_charset.setdefault(charset.lower(), cid)
    return by_name, by_charset


def collation_id(collation: str | None, charset: str | None, flavor: str = "mysql") -> int | None:
    """The id of a collation named in SQL (``COLLATE latin1_bin``), else of a collation of
    ``charset`` (``CHARACTER SET latin1``), else None.

    Only the character set of the id matters to the decoders, so for a charset alone the
    smallest id of that charset stands for it (which is not always the server's default
    collation). Old names (``utf8_bin``) are read as their current ones (``utf8mb3_bin``).
    """
    by_name, by_charset = _ids_by_name(flavor.lower())
    if collation:
        name = collation.lower()
        prefix, _, rest = name.partition("_")
        for candidate in (name, f"{CHARSET_ALIASES.get(prefix, prefix)}_{rest}"):
            if candidate in by_name:
                return by_name[candidate]
        if charset is None:
            charset = prefix
    if charset:
        if charset.lower() == "binary":
            return 63
        return by_charset.get(_canonical(charset))
    return None


def _canonical(charset: str) -> str:
    name = charset.lower()
    return CHARSET_ALIASES.get(name, name)


def codec_for(charset: str) -> str | None:
    """Nearest Python codec name for a server character set; None for binary, unknown charsets
    and those without a Python codec (see :func:`decode_table_for`)."""
    return CHARSET_CODECS.get(_canonical(charset))


def decode_table_for(charset: str) -> str | None:
    """The exact 256-entry decode table of a single-byte charset Python has no exact codec for
    (latin1 among them), else None."""
    return SINGLE_BYTE_DECODE_TABLES.get(_canonical(charset))


def decode_text(data: bytes, charset: str, errors: str = "strict") -> str:
    """Decode one value of a server character set the way the server reads it.

    Uses the exact byte table where there is one, else the codec from :data:`CHARSET_CODECS`.
    ``errors`` is the codecs argument; for table charsets "strict" raises on an unmapped byte,
    "ignore" drops it and anything else leaves :data:`UNMAPPED`.  LookupError for binary and
    unknown character sets.
    """
    name = _canonical(charset)
    translation = _TRANSLATIONS.get(name)
    if translation is not None:
        text = bytes(data).decode("latin-1").translate(translation)
        if UNMAPPED in text:
            if errors == "strict":
                pos = text.index(UNMAPPED)
                reason = "byte maps to no character"
                raise UnicodeDecodeError(name, bytes(data), pos, pos + 1, reason)
            if errors == "ignore":
                text = text.replace(UNMAPPED, "")
        return text
    codec = CHARSET_CODECS.get(name)
    if codec is None:
        raise LookupError(f"no text decoding for character set {charset!r}")
    return bytes(data).decode(codec, errors)
