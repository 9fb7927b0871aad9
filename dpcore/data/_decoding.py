"""From a CSV source to text: reading paths, bytes and file objects under a size limit,
decoding (UTF-8, UTF-16/32 with or without a byte-order mark), rejecting binary data, finding
the delimiter, splitting lines as Python's csv module sees them and locating a position by row
and column for messages.

The first stage of :func:`dpcore.data.read_table` (see :mod:`dpcore.data.tables` for the
rules); nothing here writes to disk or logs.
"""

from __future__ import annotations

import codecs
import csv
import os
import re

from .._validation import check_int
from ..exceptions import DataValidationError
from ..settings import ENV_VARS, get_limits

#: Delimiters recognised in the header line, in order of preference on ties.
DELIMITERS = (",", ";", "\t", "|")
MIB = 2**20
_BOMS = (
    # UTF-32 first: its little-endian BOM starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")


def _printable(text: str) -> str:
    """``text`` with invisible and unprintable characters (tabs, NULs, lone surrogates, ...)
    written as escapes, so that messages show them and can always be encoded."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _short(cell: str, limit: int = 40) -> str:
    """A cell or header name for a message: stripped, shortened, unprintables escaped."""
    cell = cell.strip()
    return _printable(cell if len(cell) <= limit else cell[: limit - 3] + "...")


def _locate(prefix: str) -> tuple[int, str | None]:
    """Spreadsheet row and column name of the position just after ``prefix`` (decoded text).

    The row counts line breaks; the column is the header name of the field the position is
    in (None in the header itself, beyond the header, or when it cannot be told).
    """
    prefix = prefix.removeprefix("\ufeff")
    row = prefix.count("\n") + prefix.count("\r") - prefix.count("\r\n") + 1
    cut = max(prefix.rfind("\n"), prefix.rfind("\r"))
    complete, current = prefix[: cut + 1], prefix[cut + 1 :]
    header_line = next((s for s in _LINE_BREAK.split(complete[:65536]) if s.strip()), None)
    if header_line is None:
        return row, None
    delimiter = _sniff_delimiter(header_line)
    try:
        names = next(csv.reader([header_line], delimiter=delimiter))
        field = len(next(csv.reader([current], delimiter=delimiter), [])) - 1
    except csv.Error:
        return row, None
    field = max(field, 0)
    name = names[field].strip() if field < len(names) else ""
    return row, (_short(name) or None)


def _check_no_nul(text: str):
    idx = text.find("\x00")
    if idx >= 0:
        row, column = _locate(text[:idx])
        raise DataValidationError(
            "the file contains binary data (a NUL character), so it is not a text CSV file.",
            row=row, column=column,
        )


def _utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` if ``data`` looks like UTF-16 text without a BOM.

    Mostly-ASCII text (as CSV files of numbers are) in UTF-16 has a zero high byte in almost
    every two-byte unit, at odd offsets (little-endian) or even ones (big-endian).
    """
    head = data[:4096]
    head = head[: len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    for zeros, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros.count(0) >= 0.9 * len(zeros) and other.count(0) <= 0.1 * len(other):
            return codec
    return None


def _decode_as(data: bytes, codec: str, label: str, skip: int = 0) -> str:
    """Decode ``data[skip:]`` (``skip`` = BOM length) strictly, or raise a located error."""
    try:
        return data[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        prefix = data[skip : skip + exc.start].decode(codec, errors="replace")
        offset = skip + exc.start
        if label == "UTF-8":
            bad = data[offset : offset + 1].hex().upper()
            message = (
                f"byte 0x{bad} (at offset {offset} of the file) is not valid UTF-8 text; the "
                "file was probably saved in another encoding such as Windows-1252 or Latin-1. "
                "Save it as 'CSV UTF-8' and try again."
            )
        else:
            message = (
                f"the file looks like {label} text but is not valid {label} at offset {offset} "
                f"of the file ({exc.reason}). Save it as 'CSV UTF-8' and try again."
            )
        row, column = _locate(prefix)
        raise DataValidationError(message, row=row, column=column) from exc


def _decode(data: bytes) -> str:
    """Text of ``data``: UTF-8, or UTF-16/UTF-32 with a BOM, or UTF-16 without one."""
    if data.startswith(b"PK\x03\x04"):
        raise DataValidationError(
            "this is an Excel workbook (.xlsx) or another zip archive, not a CSV file. In Excel, "
            "use File > Save As and choose 'CSV UTF-8 (comma delimited)'."
        )
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        raise DataValidationError(
            "this is an old Excel workbook (.xls), not a CSV file. In Excel, use File > Save As "
            "and choose 'CSV UTF-8 (comma delimited)'."
        )
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            text = _decode_as(data, codec, label, skip=len(bom))
            break
    else:
        codec = _utf16_without_bom(data)
        if codec is not None:
            text = _decode_as(data, codec, "UTF-16")
        else:
            idx = data.find(b"\x00")
            if idx >= 0:
                row, column = _locate(data[:idx].decode("utf-8", errors="replace"))
                raise DataValidationError(
                    "the file contains binary data (NUL bytes), so it is not a text CSV file.",
                    row=row, column=column,
                )
            text = _decode_as(data, "utf-8", "UTF-8")
    _check_no_nul(text)
    return text


def _max_bytes(max_bytes) -> int:
    """``max_bytes`` checked, or the library's limit
    (:attr:`dpcore.settings.Limits.max_upload_mb` MiB) by default."""
    if max_bytes is None:
        return get_limits().max_upload_mb * MIB
    return check_int(max_bytes, "max_bytes")


def _too_big(size: int, max_bytes: int, caller: str, default: bool) -> DataValidationError:
    """The error for a file of ``size`` bytes over ``max_bytes``; ``default`` says whether the
    limit is the library's default (changed by its environment variable) or the caller's."""
    if default:
        (var,) = ENV_VARS["max_upload_mb"]
        how = (f"raise the limit: set the environment variable {var} (in MiB), or pass "
               f"{caller}(..., max_bytes=...)")
    else:
        how = f"pass a larger {caller}(..., max_bytes=...)"
    return DataValidationError(
        f"the file has {size:,} bytes, more than the limit of {max_bytes:,} bytes "
        f"({max_bytes / MIB:.3g} MiB). Use a smaller file, or {how}."
    )


def _read_text(source, max_bytes=None, caller="read_table") -> str:
    """The text of ``source``: a path, bytes, or a binary or text file-like object.

    Files larger than ``max_bytes`` (characters for text sources) are rejected; a path is
    checked before it is read.
    """
    return _text_of(_read_data(source, max_bytes, caller))


def _read_source(source, max_bytes=None, caller="read_table") -> str | bytes:
    """The text of ``source`` as :func:`_read_text` gives it, or the bytes themselves when
    they are plain ASCII without a NUL or a zip signature: then their text is exactly
    ``data.decode("ascii")`` (:func:`_decode` can find nothing wrong with them), and
    decoding is left to the reader that needs it (the vectorised reader parses the bytes)."""
    data = _read_data(source, max_bytes, caller)
    if (isinstance(data, bytes) and data.isascii() and b"\x00" not in data
            and not data.startswith(b"PK\x03\x04")):
        return data
    return _text_of(data)


def _read_data(source, max_bytes, caller):
    """The bytes or text of ``source``, under the size limit (see :func:`_read_text`)."""
    default = max_bytes is None
    max_bytes = _max_bytes(max_bytes)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        if isinstance(source, str) and ("\n" in source or "\r" in source):
            raise ValueError(
                "`source` is a str, which is read as a file path, but it contains a line break. "
                "To parse CSV text, pass io.StringIO(text) or text.encode()."
            )
        size = os.stat(source).st_size
        if size > max_bytes:
            raise _too_big(size, max_bytes, caller, default)
        with open(source, "rb") as fh:
            data = fh.read()
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        # getvalue() (BytesIO, StringIO, Streamlit's UploadedFile) reads the whole buffer
        # whatever the current position, so a file read once already still loads.
        try:
            data = source.getvalue() if hasattr(source, "getvalue") else source.read()
        except UnicodeDecodeError as exc:
            raise DataValidationError(
                f"the file is not valid text in the encoding it was opened with ({exc.reason}); "
                "save it as 'CSV UTF-8' or pass the file opened in binary mode."
            ) from exc
    else:
        raise TypeError(
            "`source` must be a path, bytes, or a file-like object, got "
            f"{type(source).__name__}."
        )
    if isinstance(data, (bytes, bytearray, memoryview, str)) and len(data) > max_bytes:
        raise _too_big(len(data), max_bytes, caller, default)
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    return data


def _text_of(data) -> str:
    """The text of what :func:`_read_data` read (bytes decoded, a str checked)."""
    if isinstance(data, bytes):
        return _decode(bytes(data))
    if isinstance(data, str):
        text = data.removeprefix("\ufeff")
        _check_no_nul(text)
        return text
    raise TypeError(f"reading `source` returned {type(data).__name__}, not bytes or str.")


def _sniff_delimiter(text: str) -> str:
    """``,``, ``;``, tab or ``|``: whichever occurs most often in the first non-blank line
    (comma on ties and when there is none)."""
    for line in lines(text[:65536]):  # the header is near the start; lazily, line by line
        if line.strip():
            counts = {d: line.count(d) for d in DELIMITERS}
            best = max(counts, key=lambda d: (counts[d], -DELIMITERS.index(d)))
            return best if counts[best] > 0 else ","
    return ","


def lines(text, start=0):
    """The lines of ``text`` from ``start`` with their line breaks, as
    ``io.StringIO(text, newline="")`` yields them (``\\n``, ``\\r\\n`` or ``\\r``), without
    copying the text. ASCII bytes give the lines of their text (decoded line by line)."""
    if isinstance(text, bytes):
        for match in _LINE_BREAK_BYTES.finditer(text, start):
            yield text[start:match.end()].decode("ascii")
            start = match.end()
        if start < len(text):
            yield text[start:].decode("ascii")
        return
    for match in _LINE_BREAK.finditer(text, start):
        yield text[start:match.end()]
        start = match.end()
    if start < len(text):
        yield text[start:]
