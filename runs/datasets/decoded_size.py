"""How many bytes a Parquet file's rows hold once decoded, counted batch by batch before the rows
are copied into Python.

A Parquet file describes its own sizes in its footer, and a dictionary-encoded column stores a
value once however many rows repeat it: a few KB on disk can decode to gigabytes. So neither the
footer nor the encoded pages are believed; each batch's rows are measured as they will be read
(a dictionary value counted once per row that uses it) and the count is held against
DATASET_EXPANSION_MAX times the file's own size.
"""
from django.conf import settings


class DecodedBudget:
    """The bytes a file's decoded rows may hold: at least one row of DATASET_ROW_MAX_KB, whatever the file."""

    def __init__(self, file_size: int):
        self.file_size = file_size
        self.limit = max(settings.DATASET_EXPANSION_MAX * file_size, settings.DATASET_ROW_MAX_BYTES)
        self.spent = 0

    def spend(self, batch, first: int) -> int | None:
        """Counts the rows of `batch` (the first being row `first`) before any is copied out; the
        number of the row that goes past the limit, if one does."""
        for offset, size in enumerate(row_sizes(batch)):
            self.spent += size
            if self.spent > self.limit:
                return first + offset
        return None

    def refusal(self, row: int) -> str:
        return (f"row {row}: the rows up to here decode to more than {self.limit} bytes, over "
                f"{settings.DATASET_EXPANSION_MAX} times the file's own {self.file_size} bytes "
                "(DATASET_EXPANSION_MAX); a Parquet file may not expand that far when read")


def row_sizes(batch) -> list[int]:
    """The decoded bytes of each row of a record batch, every column summed."""
    totals = [0] * batch.num_rows
    for column in batch.columns:
        for index, size in enumerate(column_sizes(column)):
            totals[index] += size
    return totals


def column_sizes(column) -> list[int]:
    """Each row's bytes in one column: a dictionary value's size for every row that points at it."""
    import pyarrow as pa

    if isinstance(column, pa.DictionaryArray):
        sizes = value_sizes(column.dictionary)
        return [0 if index is None else sizes[index] for index in column.indices.to_pylist()]
    return value_sizes(column)


def value_sizes(values) -> list[int]:
    """Text and bytes by their length; anything else by the bytes its slice of the array holds."""
    if is_text(values.type):
        return text_lengths(values).tolist()
    return [values.slice(index, 1).nbytes for index in range(len(values))]


def text_lengths(values):
    """The byte length of each value of a text or bytes array, read off its offsets (a numpy array).
    Not pyarrow.compute: its first call costs about a second, in a process started for one check."""
    import numpy as np
    import pyarrow as pa

    wide = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    dtype = np.int64 if wide else np.int32
    offsets = np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values) + 1,
                            offset=values.offset * np.dtype(dtype).itemsize)
    return np.diff(offsets)


def is_text(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) \
        or pa.types.is_large_binary(kind)
