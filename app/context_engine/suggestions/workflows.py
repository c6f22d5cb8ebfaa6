"""Action signatures of a sentence: ``verb object`` phrases and command lines (S11.4).

Nothing here is a list of workflows: an imperative sentence's first word is its verb once
politeness is peeled off, and its object is the first one to three content words after it.
Commands come from inline code spans such as ``gh pr checkout 12`` → ``gh pr checkout``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .similarity import is_cjk
from .words import word_set

_LEAD = re.compile(
    r"^(?:(?:please|pls|kindly|ok|okay|so|now|then|and|also|next|first|finally|just|hey|hi|"
    r"again|quickly)\b[\s,:;]*|(?:can|could|would|will) you\b\s*|"
    r"(?:let's|lets|let us|go ahead and|i need you to|i want you to|i'd like you to)\b\s*)+",
    re.IGNORECASE,
)
_NOT_VERBS = word_set(
    """i you we they he she it its it's this that these those there here what why how when where
    who which whose is are was were am be been do does did done have has had the a an my our your
    their thanks thank yes no not great good nice cool sure hmm wait still also maybe perhaps
    looks seems that's there's here's i'm i've we're you're ok okay well oh ah hello hi hey
    same other another some any all every each if but or and because since as for with to in on
    at of by from after before once again only very too more most less much many"""
)
_DETERMINERS = word_set(
    """the a an this that these those my our your its their all any some each every both it them
    me us him her new current latest existing same few couple up"""
)
_BREAKS = word_set(
    """after before with for to in on from by once when then and or so because if but at into
    onto against via as than until while of about without using under over per since whenever
    again now first next too also please"""
)
# Objects too vague to name a workflow on their own ("fix the bug", "change this thing").
_VAGUE = word_set(
    """bug issue error problem thing stuff code file one change way something everything
    anything job work task step rest following above below same other"""
)
# Spellings of one thing folded to one word, so two sessions' phrasings meet.
_CANON = re.compile(
    r"\b(?:(pull[ -]?requests?|prs)|(merge[ -]?requests?)|(unit[ -]?tests?)|(code[ -]?review))\b"
)
_CANON_WORDS = ("pr", "mr", "tests", "review")
_CANON_HINTS = ("pull", "prs", "merge", "unit", "code")
_WORD = re.compile(r"[a-z][a-z0-9'-]*")
# Chinese requests: polite openers and filler peeled off before the verb (请/帮我/再…, 一下…).
_CJK_LEAD = re.compile(
    r"^(?:请你?|麻烦你?|帮我|帮忙|你来|你去|你|再|先|然后|接着|现在|也|顺便|能不能|可不可以|"
    r"可以|给我|我们|我想|我要|需要)+"
)
_CJK_NOISE = re.compile(r"一下|一遍|这个|那个|这些|那些|所有的|所有|我们的|我的|一个")
# Sentence openers that are not verbs (pronouns, question and discourse words, 把 fronting).
_CJK_NOT_VERBS = frozenset("这那它他她我你是有把为怎什哪谁吗好对嗯哦啊谢没不")
_LATIN = re.compile(r"[a-z][a-z0-9-]*")
_CJK_VAGUE = ("问题", "东西", "一下")
_SPAN = re.compile(r"`([^`\n]{2,120})`")
_CMD_HEAD = re.compile(r"^[a-z][a-z0-9._-]*$")
_CMD_WORD = re.compile(r"^[a-z][a-z0-9-]*$")


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _canon(text: str) -> str:
    if any(hint in text for hint in _CANON_HINTS):
        return _CANON.sub(lambda m: _CANON_WORDS[(m.lastindex or 1) - 1], text)
    return text


def cjk_phrase(sentence: str) -> str | None:
    """The opening action of a Chinese request, or ``None``.

    Chinese has no spaces to find the verb's end, so the key is the first (up to) four
    characters after the polite opener and filler, plus a Latin word that follows a shorter
    run: 帮我更新一下 PR → ``更新 pr``, 再跑一遍测试 → ``跑测试``.
    """
    text = _canon(sentence[:80].strip().lower().replace("`", " "))
    if text.endswith(("?", "？", "吗", "吗？", "呢")):
        return None
    text = _CJK_NOISE.sub("", _CJK_LEAD.sub("", text)).lstrip()
    run = ""
    for ch in text[:4]:
        if not is_cjk(ch):
            break
        run += ch
    if not run or run[0] in _CJK_NOT_VERBS:
        return None
    latin = _LATIN.match(text[len(run) :].lstrip(" 了过")) if len(run) < 4 else None
    if latin is not None and _singular(latin.group(0)) not in _VAGUE:
        return f"{run} {_singular(latin.group(0))}"
    if len(run) < 3 or any(vague in run for vague in _CJK_VAGUE):
        return None
    return run


def verb_phrase(sentence: str) -> str | None:
    """``verb object`` of an imperative sentence, normalized, or ``None``."""
    head = sentence.lstrip()[:1]
    if head and is_cjk(head):
        return cjk_phrase(sentence)
    # The verb and its object open an imperative sentence: the head is enough.
    text = _canon(sentence[:160].strip().lower().replace("`", " "))
    text = _LEAD.sub("", text)
    words = text.split(None, 12)[:12]
    if not words:
        return None
    verb = words[0].strip(",.:;!")
    if not _WORD.fullmatch(verb) or verb in _NOT_VERBS or len(verb) < 2:
        return None
    if len(verb) > 4 and verb.endswith(("ing", "ed")):
        return None  # narration ("fixed the bug"), not a request
    obj: list[str] = []
    for raw in words[1:]:
        word = raw.strip("\"'()")
        stop = word.endswith((",", ".", ":", ";", "!", "?"))
        word = word.rstrip(",.:;!?")
        if not word or word in _BREAKS or not _WORD.fullmatch(word):
            break
        if word not in _DETERMINERS:
            obj.append(_singular(word))
        if len(obj) == 3 or stop:
            break
    if not obj or all(word in _VAGUE for word in obj):
        return None
    return " ".join([verb, *obj])


def commands(sentence: str) -> Iterator[str]:
    """Leading plain words (up to three) of each command-like inline code span."""
    for span in _SPAN.findall(sentence):
        parts = span.strip().split()
        if not parts or not _CMD_HEAD.match(parts[0]):
            continue
        words = [parts[0]]
        for part in parts[1:3]:
            if not _CMD_WORD.match(part):
                break
            words.append(part)
        if len(words) >= 2:
            yield " ".join(words)


def signatures(sentence: str) -> list[str]:
    """Every action signature of one sentence, in order, without repeats."""
    out: list[str] = []
    found = list(commands(sentence))
    phrase = verb_phrase(sentence)
    # "run `gh pr checkout 12`": the command says it better than "run gh pr".
    if phrase and not any(phrase.split()[1] == c.split()[0] for c in found):
        out.append(phrase)
    for command in found:
        key = f"$ {command}"
        if key not in out:
            out.append(key)
    return out
