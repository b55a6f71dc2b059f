"""Text normalisation and tokenisation shared by indexing, queries and the classifier.

Persian text arrives in many spellings of the same word (Arabic ي/ك, Persian or
Arabic digits, ZWNJ, diacritics), and tool names arrive as ``snake_case``,
``camelCase``, ``dotted.names`` or ``ns::names``. Everything that compares text goes
through :func:`normalize` and :func:`tokenize` so index and query agree exactly.
"""

from __future__ import annotations

import re
import unicodedata

# Arabic code points that have a Persian twin, and both digit sets.
_CHAR_MAP = str.maketrans(
    {
        "ي": "ی", "ى": "ی", "ئ": "ی", "ك": "ک", "ة": "ه", "ۀ": "ه", "أ": "ا", "إ": "ا",
        "ٱ": "ا", "ؤ": "و",
        **{chr(0x06F0 + i): str(i) for i in range(10)},
        **{chr(0x0660 + i): str(i) for i in range(10)},
        "\u200c": " ", "\u200d": "", "\u200e": "", "\u200f": "", "\u0640": "",
    }
)
_DIACRITICS = re.compile("[\u064b-\u065f\u0670\u06d6-\u06ed]")
_CONTROL = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NAME_SEPARATORS = re.compile(r"(?:::|[._\-/&:\s]+)")
_NAME_SEPARATORS_NO_COLON = re.compile(r"[._\-/&\s]+")  # the same where no ':' occurs (faster: no alternation)
WORD = re.compile(r"\w+", re.UNICODE)

MAX_TEXT = 2000


def sanitize(text: str, limit: int = MAX_TEXT) -> str:
    """Untrusted catalog text: strip control and bidi-override characters, cap length."""
    if not text.isprintable():  # every character _CONTROL matches is unprintable: printable text has none
        text = _CONTROL.sub(" ", text)
    return text[:limit]


_MAPPED = re.compile("[" + "".join(re.escape(chr(c)) for c in _CHAR_MAP) + "]")


# _CHAR_MAP and _DIACRITICS as one table and one pattern: no mapped character yields a
# diacritic, so folding then stripping equals one pass. Runs are rare, so a regex scan
# with a callback per run beats ``str.translate`` (a dict lookup per character).
_FOLD = {**_CHAR_MAP, **{c: None for c in [*range(0x064B, 0x0660), 0x0670, *range(0x06D6, 0x06EE)]}}
_FOLDABLE = re.compile("[" + "".join(re.escape(chr(c)) for c in _FOLD) + "]+")


def _fold_run(match: re.Match[str]) -> str:
    return match.group().translate(_FOLD)


def normalize(text: str) -> str:
    """Fold the spellings of one word into one form (NFKC, Persian letters, digits, case).

    ASCII text is already NFKC, holds no mapped letter or diacritic, and casefolds
    like ``lower``: it takes the one-call path.
    """
    if text.isascii():
        return text.lower()
    return _FOLDABLE.sub(_fold_run, unicodedata.normalize("NFKC", text)).casefold()


def tokenize(text: str) -> list[str]:
    """Normalised word tokens, with ``_`` treated as a separator."""
    return WORD.findall(normalize(text).replace("_", " "))


def split_name(name: str) -> str:
    """``createInvoice`` / ``create_invoice`` / ``sales.create`` / ``ns::x`` → words."""
    spaced = _NAME_SEPARATORS.sub(" ", name)
    return _CAMEL.sub(" ", spaced)


# The no-colon separator class on ASCII as a translate table (CPython's fast ASCII path):
# every separator becomes a space, and a run of spaces then collapses to one, which is
# what replacing each run of separators by one space gives.
_ASCII_TO_SPACE = str.maketrans({c: " " for c in range(128) if _NAME_SEPARATORS_NO_COLON.fullmatch(chr(c))})
_SPACE_RUN = re.compile("  +")


def split_names(names: list[str]) -> list[str]:
    """``split_name`` of many names, each pass over one joined string.

    NUL is in neither separator class nor either side of a camel-case boundary, so no
    match can touch it and splitting back gives each name's own result. ASCII names
    without ``:`` take a translate instead of the separator regex, and only the names
    holding an ASCII capital (the camel-case pattern needs one) are scanned for
    camel-case boundaries.
    """
    joined = "\x00".join(names)
    if ":" in joined:
        spaced = _NAME_SEPARATORS.sub(" ", joined)
    elif joined.isascii():
        spaced = joined.translate(_ASCII_TO_SPACE)
        if "  " in spaced:
            spaced = _SPACE_RUN.sub(" ", spaced)
    else:
        spaced = _NAME_SEPARATORS_NO_COLON.sub(" ", joined)
    parts = spaced.split("\x00")
    if len(parts) != len(names):  # a name held a NUL itself
        return [split_name(x) for x in names]
    lowered = spaced.lower()
    if lowered != spaced:  # a capital somewhere: only the names holding one can have a camel-case boundary
        cased = [i for i, (part, low) in enumerate(zip(parts, lowered.split("\x00"), strict=True)) if part != low]
        for i, part in zip(cased, _CAMEL.sub(" ", "\x00".join([parts[i] for i in cased])).split("\x00"), strict=True):
            parts[i] = part
    return parts
