"""Which Snowball stemmer a word of a text takes, and the stem.

Recall's BM25 view (``tokens.search_tokens``) stems every word that is not CJK:

- Cyrillic words: Russian, stemmed as written and then folded (``новый`` / ``новой`` → ``нов``; folding
  й → и first would leave ``новы`` and ``ново``).
- Latin words: English (Porter2, as before) unless the text reads as Spanish or Portuguese by its
  function words (``_ES_WORDS`` / ``_PT_WORDS`` against ``_EN_WORDS``; ties stay English, so an English
  text never changes tokens). Spanish and Portuguese stem the folded word (``reunión`` and ``reunion``
  typed without the accent meet); Portuguese first brings the plural ``-ões`` / ``-ães`` back to
  ``-ão`` (the stemmer alone leaves ``reuniõ`` and ``reuniã``, folded ``reunio`` and ``reunia``).

The language is decided per text, the same way for a stored row and a query, so the index and the query
always tokenise alike. PyStemmer (the C build) is used through ``snowballstemmer`` when installed:
0.24 µs a word against ~40 µs for the pure-Python stemmers (ru, es; 2-core machine, Dec 2026), with the
same stems (English compared on the development data: 4 324 words, 0 differences).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from nekomem.language.normalize import fold_diacritics

ENGLISH, SPANISH, PORTUGUESE, RUSSIAN = "english", "spanish", "portuguese", "russian"


def _words(block: str) -> frozenset[str]:
    return frozenset(block.split())


# Function words (folded) that say which Latin-script language a text is in. Words shared by Spanish and
# Portuguese (que, de, para, se, como) count for both; only the others can separate the two.
_EN_WORDS = _words(
    "the and is are was were i you my me to of it that what did do with for have we he she they this at on"
    " in be not but when where how your our a an as his her him has had would will can could should since"
    " then from by if or there their them go get"
)
_ES_WORDS = _words(
    "a el la los las y en del por con una un mi mis yo es muy pero lo le su al que cuando donde como fue fui"
    " hice tengo tiene tu nos se este esta hace para de ella usted estoy"
)
_PT_WORDS = _words(
    "a o os as e em do da dos das no na nos nas com uma um meu minha eu voce muito mas nao ao pelo pela foi"
    " fui que quando onde como de para se tenho tem esse essa isso ele ela sua seu estou"
)
# Letters Portuguese writes and Spanish does not (a tie between the two goes to Spanish without them).
_PT_LETTERS = re.compile("[ãõçâêô]")

# Function words dropped from the BM25 terms, as the English ones are (``tokens.ENGLISH_STOP_WORDS``):
# in a pool of a few hundred rows their IDF is not small enough to keep them from ranking.
STOP_WORDS = {
    SPANISH: _words(
        "el la los las y o u en de del por con para sin una un unos unas mi mis tu tus su sus yo me te se"
        " nos os lo le les al que a es son muy pero como cuando donde este esta esto ese esa eso ya"
    ),
    PORTUGUESE: _words(
        "o a os as e ou em de do da dos das no na nos nas com para por sem um uma uns umas meu minha meus"
        " minhas teu tua seu sua eu tu voce me te se lhe ao aos que e muito mas como quando onde este esta"
        " isso esse essa isto ja"
    ),
    RUSSIAN: _words(
        "я ты мы вы он она оно они и в во на с со к ко по о об у за из от до не ни что как это но а же ли"
        " бы мне меня тебя тебе нас вам его ее её неё нее него ней ним их мой моя моё мое мои твой твоя"
        " где когда был была было были есть то там тут так уже"
    ),
}
_CYRILLIC = re.compile("[\u0400-\u04ff]")


def is_stop_word(word: str, language: str) -> bool:
    """Whether a lower-case word (Latin ones folded, Cyrillic ones as written) is a function word."""
    if _CYRILLIC.search(word):
        return word in STOP_WORDS[RUSSIAN]
    if language == SPANISH_OR_PORTUGUESE:
        return word in STOP_WORDS[SPANISH] or word in STOP_WORDS[PORTUGUESE]
    return word in STOP_WORDS.get(language, ())


_PT_PLURAL = re.compile(r"(?:ões|ães|oes|aes)$")


# A text with accented Latin letters and no function word of any of the three ("reuniões?", "películas
# de terror" is not one): Spanish or Portuguese, unknown which, so its words get both stems.
SPANISH_OR_PORTUGUESE = "spanish|portuguese"
# é, è, ï are left out: English writes them too (café, naïve), and an English text keeps its terms.
_IBERIAN_LETTERS = re.compile("[áíóúñãõçâêôàü¿¡]", re.IGNORECASE)


def latin_language(words: Iterable[str], *, raw_text: str = "") -> str:
    """English, Spanish or Portuguese for a text's lower-case, folded Latin words; English on a tie, and
    ``SPANISH_OR_PORTUGUESE`` for accented words without a function word to tell."""
    words = words if isinstance(words, list) else list(words)
    # Counted in C (map over the set's __contains__): this runs for every row an index takes.
    en = sum(map(_EN_WORDS.__contains__, words))
    es = sum(map(_ES_WORDS.__contains__, words))
    pt = sum(map(_PT_WORDS.__contains__, words))
    if en == es == pt == 0 and _IBERIAN_LETTERS.search(raw_text):
        return SPANISH_OR_PORTUGUESE
    # One function word more than English is not enough ("as a career", "get 'em" read as Portuguese)
    # unless the text writes a letter English does not.
    lead = max(es, pt) - en
    if lead <= 0 or (lead == 1 and not _IBERIAN_LETTERS.search(raw_text)):
        return ENGLISH
    if es != pt:
        return SPANISH if es > pt else PORTUGUESE
    if _PT_LETTERS.search(raw_text):
        return PORTUGUESE
    return SPANISH


_stemmers = threading.local()


def _stemmer(language: str) -> Any:
    """This thread's stemmer for ``language``: a Snowball stemmer keeps the word it works on in the
    instance, so two threads sharing one garble each other's words."""
    cache = getattr(_stemmers, "by_language", None)
    if cache is None:
        cache = _stemmers.by_language = {}
    stemmer = cache.get(language)
    if stemmer is None:
        import snowballstemmer

        stemmer = cache[language] = snowballstemmer.stemmer(language)
    return stemmer


@lru_cache(maxsize=65536)
def terms(word: str, language: str) -> tuple[str, ...]:
    """The BM25 term(s) of one lower-case word in a text of ``language``: none for a function word, its
    stem, or both the Spanish and the Portuguese stem when the text does not say which (the same word in
    a stored row and in a query then shares at least one). Memoised: one lookup a word on the hot path."""
    if is_stop_word(word, language):
        return ()
    if language != SPANISH_OR_PORTUGUESE or _CYRILLIC.search(word):
        return (stem(word, language),)
    spanish, portuguese = stem(word, SPANISH), stem(word, PORTUGUESE)
    return (spanish,) if spanish == portuguese else (spanish, portuguese)


@lru_cache(maxsize=65536)
def stem(word: str, language: str) -> str:
    """The folded stem of one lower-case word (memoised: the same words recur in every pool)."""
    if _CYRILLIC.search(word):
        return fold_diacritics(str(_stemmer(RUSSIAN).stemWord(word)))
    folded = fold_diacritics(word)
    if language == ENGLISH:
        if not folded.isascii() or not folded.isalpha():
            return folded
        return str(_stemmer(ENGLISH).stemWord(folded))
    if language == PORTUGUESE:
        folded = _PT_PLURAL.sub("ao", folded)
    return str(_stemmer(language).stemWord(folded))
