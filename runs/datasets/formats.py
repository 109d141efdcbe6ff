"""Row readers for uploaded files. Each error names the line or part of the file that is wrong."""
import csv
import io
import json
from collections.abc import Iterator

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


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
    stream = io.TextIOWrapper(fileobj, encoding="utf-8-sig", newline="")
    try:
        yield from enumerate(stream, start=1)
    except UnicodeDecodeError as exc:
        raise DatasetFileError(f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    finally:
        stream.detach()


def _jsonl_rows(fileobj) -> Iterator[dict]:
    for number, line in _text_lines(fileobj):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetFileError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
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

    try:
        table = pq.ParquetFile(fileobj)
        batches = table.iter_batches(batch_size=1024)
        for batch in batches:
            yield from batch.to_pylist()
    except (pa.ArrowInvalid, OSError) as exc:
        raise DatasetFileError(f"not a readable Parquet file ({exc})") from None
