"""Row readers on hostile files: no line is read past DATASET_ROW_MAX_BYTES, JSON nested too deep
for the parser is an error naming its line, and a Parquet file is refused naming the row where its
rows, counted as decoded, pass DATASET_EXPANSION_MAX times its size (a dictionary value counted for
every row that repeats it, the footer not believed), or from a dictionary when one value is too long."""
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runs.datasets.formats import DatasetFileError, read_rows


class Recorded(io.BytesIO):
    """Keeps the size of the largest single read: memory the reader holds at once."""
    largest = 0

    def readline(self, size=-1):
        line = super().readline(size)
        self.largest = max(self.largest, len(line))
        return line


@pytest.fixture(autouse=True)
def small_rows(settings):
    settings.DATASET_ROW_MAX_BYTES = 1024


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_line_longer_than_a_row_may_be_is_refused_without_reading_all_of_it(fmt):
    header = b"prompt\n" if fmt == "csv" else b""
    source = Recorded(header + b'{"prompt": "' + b"x" * 1_000_000 + b'"}\n')
    with pytest.raises(DatasetFileError, match=r"^line \d: longer than 1 KiB \(DATASET_ROW_MAX_KB\)"):
        list(read_rows(source, fmt))
    assert source.largest <= 1025


def test_json_nested_too_deep_to_parse_is_an_error_naming_its_line(settings):
    settings.DATASET_ROW_MAX_BYTES = 1024 * 1024
    lines = json.dumps({"prompt": "a"}) + "\n" + '{"prompt": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    with pytest.raises(DatasetFileError, match="^line 2: JSON nested too deeply to read$"):
        list(read_rows(io.BytesIO(lines.encode()), "jsonl"))


def test_text_that_is_not_utf8_is_an_error_naming_its_line_and_byte():
    expected = r"^line 2: the file is not UTF-8 text \(invalid start byte at byte 16\)"
    with pytest.raises(DatasetFileError, match=expected):
        list(read_rows(io.BytesIO(b'{"prompt": "a"}\n\xff\n'), "jsonl"))


def test_a_byte_order_mark_is_not_part_of_the_first_column():
    assert list(read_rows(io.BytesIO(b"\xef\xbb\xbfprompt\r\nhello\r\n"), "csv")) == [{"prompt": "hello"}]


def parquet(table, **options) -> io.BytesIO:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **options)
    return buffer


def test_a_parquet_value_repeated_past_the_row_limit_is_refused_before_it_is_copied(settings):
    # 624 bytes of file, 2000 rows of one 4 MiB value: 8 GB as Python strings.
    column = pa.DictionaryArray.from_arrays(pa.array([0] * 2000, pa.int32()), pa.array(["x" * (4 << 20)]))
    bomb = parquet(pa.table({"prompt": column}), compression="zstd")
    settings.DATASET_ROW_MAX_BYTES = 1 << 20
    with pytest.raises(DatasetFileError, match=r"^rows 1-64: a 'prompt' value is longer than 1024 KiB"):
        next(read_rows(bomb, "parquet"))


def test_a_parquet_file_whose_rows_decode_past_its_expansion_limit_is_refused_naming_the_row(settings):
    settings.DATASET_EXPANSION_MAX, settings.DATASET_ROW_MAX_BYTES = 4, 1024
    table = pa.table({"prompt": [f"row {i} " + "y" * 100 for i in range(1000)]})
    file = parquet(table, use_dictionary=False, compression="zstd")  # y*100 compresses well
    size = len(file.getvalue())
    expected = next(n for n in range(1, 1001) if sum(len(f"row {i} ") + 100 for i in range(n)) > 4 * size)
    with pytest.raises(DatasetFileError, match=rf"^row {expected}: the rows up to here decode to more than "
                                               rf"{4 * size} bytes, over 4 times the file's own {size} bytes "
                                               r"\(DATASET_EXPANSION_MAX\)"):
        list(read_rows(file, "parquet"))


def test_a_dictionary_value_is_counted_for_every_row_that_repeats_it(settings):
    settings.DATASET_EXPANSION_MAX, settings.DATASET_ROW_MAX_BYTES = 32, 1024
    column = pa.DictionaryArray.from_arrays(pa.array([0] * 5000, pa.int32()), pa.array(["z" * 1000]))
    file = parquet(pa.table({"prompt": column}), compression="zstd")
    limit = 32 * len(file.getvalue())
    with pytest.raises(DatasetFileError, match=rf"^row {limit // 1000 + 1}: the rows up to here decode"):
        list(read_rows(file, "parquet"))


def test_a_file_that_decodes_within_its_limit_is_read_whole(settings):
    settings.DATASET_EXPANSION_MAX = 32
    table = pa.table({"prompt": [f"question {i}" for i in range(500)], "n": list(range(500))})
    assert len(list(read_rows(parquet(table), "parquet"))) == 500


def test_parquet_text_read_as_dictionaries_comes_back_as_plain_values():
    table = pa.table({"prompt": ["a", "b", "a"], "n": [1, 2, 3]})
    assert list(read_rows(parquet(table), "parquet")) == [{"prompt": "a", "n": 1}, {"prompt": "b", "n": 2},
                                                          {"prompt": "a", "n": 3}]
