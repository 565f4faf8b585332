"""The web table's words: one catalogue (static/table/strings.json) in six languages, with no
key missing from a language, none unused by the page's scripts, the same placeholders in every
language, and no sentence written into a script instead of the catalogue."""

from __future__ import annotations

import json
import re
from pathlib import Path

from service.api.table_page import TABLE_DIR

CATALOGUE = TABLE_DIR / "strings.json"
LANGUAGES = {"en", "sw", "tr", "ha", "ceb", "fi"}
USED = re.compile(r"\bt(n?)\(\s*\"([a-z0-9_.]+)\"")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# A quoted sentence for people: a capital, a lower-case word, a space (e.g. "Your turn").
SENTENCE = re.compile(r"[\"'`][A-Z][a-z]+ [a-z]+[^\"'`]*[\"'`]")


def scripts() -> list[Path]:
    return sorted(p for p in TABLE_DIR.glob("*.js"))


def used_keys() -> set[str]:
    keys: set[str] = set()
    for script in scripts():
        for counted, key in USED.findall(script.read_text()):
            keys |= {f"{key}.one", f"{key}.other"} if counted else {key}
    return keys


def test_every_language_has_exactly_the_keys_the_scripts_use() -> None:
    catalogue = json.loads(CATALOGUE.read_text())
    assert set(catalogue) == LANGUAGES
    used = used_keys()
    assert len(used) > 200
    for language, texts in catalogue.items():
        missing, unused = used - set(texts), set(texts) - used
        assert not missing and not unused, (language, sorted(missing), sorted(unused))
        assert all(isinstance(v, str) and v.strip() for v in texts.values()), language


def test_placeholders_agree_across_languages() -> None:
    catalogue = json.loads(CATALOGUE.read_text())
    for key, english in catalogue["en"].items():
        wanted = set(PLACEHOLDER.findall(english))
        for language, texts in catalogue.items():
            assert set(PLACEHOLDER.findall(texts[key])) == wanted, (language, key)


def test_the_languages_are_translated_and_offered_in_the_picker() -> None:
    catalogue = json.loads(CATALOGUE.read_text())
    for language in LANGUAGES - {"en"}:
        same = [k for k, v in catalogue[language].items() if v == catalogue["en"][k]]
        # Bot names, "Bot", "Host" and the like may stay; most of the page may not.
        assert len(same) < len(catalogue["en"]) * 0.15, (language, same)
    picker = (TABLE_DIR / "i18n.js").read_text()
    assert set(re.findall(r'\["(\w+)", "', picker)) == LANGUAGES


def test_no_sentence_is_written_into_a_script() -> None:
    found = [
        (script.name, match)
        for script in scripts()
        for match in SENTENCE.findall(script.read_text())
        if not match.startswith(("'Segoe", '"Segoe'))
    ]
    assert found == []
