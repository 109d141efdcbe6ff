"""Row readers for uploaded files. Each error names the line or part of the file that is wrong.

An upload is untrusted: a line is read only up to DATASET_ROW_MAX_BYTES (a 200 MB file of one
line would otherwise become one 200 MB string, and its JSON a larger object), JSON nested too
deeply for the parser is an error naming its line. A Parquet file's rows are measured as they
are decoded, a batch at a time and before they are copied into Python (decoded_size.py): past
DATASET_EXPANSION_MAX times the file's size the read stops naming the row, and a text value
longer than a row may be is refused before it is copied. Its footer's sizes are not believed.
"""
import csv
import itertools
import json
from collections.abc import Iterator

from django.conf import settings

from runs.datasets.decoded_size import DecodedBudget, is_text, text_lengths

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}
BOM = b"\xef\xbb\xbf"
PARQUET_BATCH_ROWS = 64


class DatasetFileError(ValueError):
    """The source cannot be read as a dataset; the message says where and why, and
    `field` names the request field a person has to change."""

    def __init__(self, message: str, field: str = "file"):
        super().__init__(message)
        self.field = field


def detect_format(filename: str) -> str:
    for suffix, fmt in FORMATS.items():
        if filename.lower().endswith(suffix):
            return fmt
    raise DatasetFileError(f"{filename!r} is not a JSONL, CSV or Parquet file (name it .jsonl, .csv or .parquet)")


def read_rows(fileobj, fmt: str) -> Iterator[dict]:
    fileobj.seek(0)
    return {"jsonl": _jsonl_rows, "csv": _csv_rows, "parquet": _parquet_rows}[fmt](fileobj)


def _text_lines(fileobj) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, none longer than DATASET_ROW_MAX_BYTES: no more than
    that is ever read into memory at once."""
    limit, offset = settings.DATASET_ROW_MAX_BYTES, 0
    for number in itertools.count(1):
        raw = fileobj.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit:
            raise DatasetFileError(f"line {number}: longer than {_kib(limit)} (DATASET_ROW_MAX_KB); a row must "
                                   "fit in one line of at most that")
        if number == 1 and raw.startswith(BOM):
            raw, offset = raw[len(BOM):], len(BOM)
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetFileError(f"line {number}: the file is not UTF-8 text ({exc.reason} at byte "
                                   f"{offset + exc.start})") from None
        offset += len(raw)


def _kib(size: int) -> str:
    return f"{size / 1024:g} KiB"


def _jsonl_rows(fileobj) -> Iterator[dict]:
    for number, line in _text_lines(fileobj):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetFileError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise DatasetFileError(f"line {number}: JSON nested too deeply to read") from None
        if not isinstance(row, dict):
            looks_like_array = number == 1 and isinstance(row, list)
            hint = "; the file looks like one JSON array, but it must be JSON Lines" if looks_like_array else ""
            raise DatasetFileError(f"line {number}: expected a JSON object per line, found {type(row).__name__}{hint}")
        yield row


def _csv_rows(fileobj) -> Iterator[dict]:
    lines = (line for _, line in _text_lines(fileobj))
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
        if not header:
            return
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise DatasetFileError(
                    f"line {reader.line_num}: {len(row)} fields where the header has {len(header)} "
                    f"({', '.join(header)})"
                )
            yield dict(zip(header, row))
    except csv.Error as exc:
        raise DatasetFileError(f"line {reader.line_num}: broken CSV ({exc})") from None


def _parquet_rows(fileobj) -> Iterator[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    budget = DecodedBudget(_size_of(fileobj))
    try:
        footer = pq.ParquetFile(fileobj)
        # Text read as dictionaries: a value repeated a million times is one value to measure, not a
        # million copies made before it could be.
        text = [field.name for field in footer.schema_arrow if is_text(field.type)]
        first = 1
        for batch in pq.ParquetFile(fileobj, read_dictionary=text).iter_batches(batch_size=PARQUET_BATCH_ROWS):
            _refuse_long_values(batch, first)
            if (past := budget.spend(batch, first)) is not None:
                raise DatasetFileError(budget.refusal(past))
            first += batch.num_rows
            yield from batch.to_pylist()
    except (pa.ArrowInvalid, OSError) as exc:
        raise DatasetFileError(f"not a readable Parquet file ({exc})") from None


def _size_of(fileobj) -> int:
    """The file's own size on disk or in memory, from its end: what its rows are measured against."""
    size = fileobj.seek(0, 2)
    fileobj.seek(0)
    return size


def _refuse_long_values(batch, first: int) -> None:
    import pyarrow as pa

    limit = settings.DATASET_ROW_MAX_BYTES
    for name, column in zip(batch.schema.names, batch.columns):
        values = column.dictionary if isinstance(column, pa.DictionaryArray) else column
        if not is_text(values.type) or not len(values):
            continue
        longest = int(text_lengths(values).max())
        if longest > limit:
            raise DatasetFileError(f"rows {first}-{first + batch.num_rows - 1}: a {name!r} value is longer than "
                                   f"{_kib(limit)} (DATASET_ROW_MAX_KB)")

