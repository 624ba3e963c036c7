"""A page's language: what it declares, checked against what its text is written in.

Many pages declare none (no ``lang``, no Content-Language), and some declare their template's
("en" on a German shop). The text is identified with py3langid (the maintained, numpy-backed
port of langid.py that trafilatura itself uses for its language filter), and:

- no declaration: the identified language, when the identification is sure enough;
- a declaration: kept, unless the text is long enough to be sure and plainly in another
  language (the declared one has next to no probability): then the identified one.

Short texts (a title, "Impressum") identify badly, so below :data:`MIN_LETTERS` letters the
text has no say.
"""

from __future__ import annotations

from array import array
from functools import lru_cache
from typing import Any

#: Letters a text needs before its identification is used at all, and before it may
#: overrule a declaration.
MIN_LETTERS = 40
OVERRULE_LETTERS = 300
#: Probability (normalised over the languages) an identification needs to be used.
SURE = 0.90
#: Below this, the declared language is implausible for a long text.
IMPLAUSIBLE = 0.001
#: Characters of the text identified (the start of the main text is enough, and bounded).
SAMPLE = 3000


#: py3langid's classes that are a dialect or variety of a language with a two-letter code:
#: counted as that language (the contract's codes). Its other three-letter classes stay as
#: they are; ``zxx`` (no linguistic content) is no language.
_MACRO = {"ary": "ar", "arz": "ar", "gug": "gn", "uzs": "uz", "sdh": "ku", "wuu": "zh",
          "yue": "zh", "gcf": "fr", "gcr": "fr", "hbo": "he", "grc": "el"}


@lru_cache(maxsize=1)
def _identifier() -> Any:
    """py3langid's model, once per process, on first use: about 0.5 s and 75 MB (its
    restricted-language mode would copy most of it again, so dialects are folded into their
    language afterwards, :data:`_MACRO`)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    # Its two per-state tables as flat arrays rather than lists of 100,000 ints each: the
    # same lookups, and nothing a lookup writes to, so workers forked after the model is
    # loaded keep sharing them (worker.pool) where a list's ints, counted at each use, were
    # copied into every worker.
    identifier._rowbase = array("q", identifier._rowbase)
    identifier.tk_output = array("q", identifier.tk_output)
    return identifier


def load_language_model() -> None:
    """Load the model now (a warm worker does it before its first job)."""
    _identifier()


def page_language(declared: str | None, text: str | None) -> str | None:
    """The page's language (a lower-case two- or three-letter code) from its declaration
    and its main text."""
    sample = (text or "")[:SAMPLE]
    letters = sum(char.isalpha() for char in sample)
    if letters < MIN_LETTERS:
        return declared
    ranked: dict[str, float] = {}
    for code, probability in _identifier().rank(sample)[:40]:
        code = _MACRO.get(code, code)
        ranked[code] = ranked.get(code, 0.0) + probability
    ranked.pop("zxx", None)
    if not ranked:
        return declared
    best, probability = max(ranked.items(), key=lambda item: item[1])
    if declared is None:
        return best if probability >= SURE else None
    if (declared != best and letters >= OVERRULE_LETTERS and probability >= SURE
            and ranked.get(declared, 0.0) < IMPLAUSIBLE):
        return best
    return declared
