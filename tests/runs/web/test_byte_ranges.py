"""Which bytes a Range header asks for, and when an If-Range lets it be honoured."""
import pytest
from django.utils.http import http_date

from runs.web.byte_ranges import ByteRange, Unsatisfiable, requested_range, same_bytes

SIZE = 1000
ETAG = '"abc"'
MODIFIED = 1_700_000_000


@pytest.mark.parametrize("header, expected", [
    ("bytes=0-", ByteRange(0, 999)),
    ("bytes=500-", ByteRange(500, 999)),
    ("bytes=10-19", ByteRange(10, 19)),
    ("bytes=990-5000", ByteRange(990, 999)),  # an end past the file stops at its last byte
    ("bytes=-100", ByteRange(900, 999)),
    ("bytes=-5000", ByteRange(0, 999)),
    ("bytes= 10 - 19", ByteRange(10, 19)),
])
def test_one_range_is_the_bytes_it_names(header, expected):
    assert requested_range(header, SIZE) == expected


@pytest.mark.parametrize("header", [None, "", "bytes=0-1,5-9", "items=0-9", "bytes=9-2", "bytes=-", "bytes=a-b"])
def test_a_header_not_taken_means_the_whole_file(header):
    assert requested_range(header, SIZE) is None


@pytest.mark.parametrize("header, size", [("bytes=1000-", 1000), ("bytes=2000-2100", 1000), ("bytes=-0", 1000),
                                          ("bytes=0-", 0), ("bytes=-5", 0)])
def test_a_range_past_the_end_is_unsatisfiable(header, size):
    with pytest.raises(Unsatisfiable):
        requested_range(header, size)


def test_content_range_says_where_the_bytes_lie_in_the_whole():
    assert ByteRange(10, 19).content_range(SIZE) == "bytes 10-19/1000" and ByteRange(10, 19).length == 10


@pytest.mark.parametrize("if_range, honoured", [
    (None, True), (ETAG, True), (http_date(MODIFIED), True),
    ('"other"', False), ('W/"abc"', False), (http_date(MODIFIED - 1), False), ("not a date", False),
])
def test_if_range_honours_a_range_only_for_the_same_bytes(if_range, honoured):
    assert same_bytes(if_range, ETAG, MODIFIED) is honoured
