"""Whole numbers read from a URL's query, a header or a search box.

`str.isdigit()` also accepts '²' and '١', which `int()` refuses, and a number past the database's
largest id overflows its integer column: either is a 500 where the caller meant "not an id".
"""
import re

MAX_ID = 2**63 - 1  # the database's largest id
_ASCII_DIGITS = re.compile(r"[0-9]{1,19}")


def whole_number(text: str, largest: int = MAX_ID) -> int | None:
    """The number `text` spells in ASCII digits, or None when it spells none or one past `largest`."""
    if not _ASCII_DIGITS.fullmatch(text):
        return None
    number = int(text)
    return number if number <= largest else None
