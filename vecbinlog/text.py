"""The old home of ``cat``'s text formatting, kept so that ``from vecbinlog.text import ...`` goes
on working: values as text are :mod:`vecbinlog.cli.text`, the lines :mod:`vecbinlog.cli.lines`."""

from .cli.lines import CsvText, JsonLinesText, TableText
from .cli.text import STYLES, column_text, json_value, time_text

__all__ = ["STYLES", "column_text", "json_value", "time_text", "CsvText", "JsonLinesText", "TableText"]
