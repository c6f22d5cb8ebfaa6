"""A saved listing, packed and with a delta's rows over it, finds exactly the changed files."""

from __future__ import annotations

import random

from context_engine.recall.saved_listing import MAX_FIELD, SavedListing, folded, pack


def identity(rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.randrange(-1, MAX_FIELD) for _ in range(6))


def naive(saved: tuple[dict, dict], now: tuple[dict, dict]) -> list[tuple[int, str]]:
    return sorted((si, name) for si in (0, 1) for name in saved[si].keys() | now[si].keys()
                  if saved[si].get(name) != now[si].get(name))


def test_changed_files_equal_a_whole_compare_in_every_case() -> None:
    rng = random.Random(3)
    for trial in range(100):
        base = tuple({f"f{i}.md": identity(rng) for i in range(rng.randrange(0, 60))}
                     for _ in range(2))
        # The delta's rows: files changed since the base (some gone, some new).
        rows = []
        saved = (dict(base[0]), dict(base[1]))
        for _ in range(rng.randrange(0, 5)):
            si = rng.randrange(2)
            name = f"f{rng.randrange(70)}.md"
            value = None if rng.random() < 0.3 else identity(rng)
            rows.append((si, name, value))
            if value is None:
                saved[si].pop(name, None)
            else:
                saved[si][name] = value
        now = (dict(saved[0]), dict(saved[1]))
        kind = trial % 4
        for _ in range(rng.randrange(0, 4)):
            si = rng.randrange(2)
            names = list(now[si])
            if kind == 0 and names:  # edited in place: same names, same order
                now[si][rng.choice(names)] = identity(rng)
            elif kind == 1:
                now[si][f"new{rng.randrange(9)}.md"] = identity(rng)
            elif kind == 2 and names:
                del now[si][rng.choice(names)]
        if kind == 3:  # listed in another order, nothing changed
            now = tuple(dict(sorted(files.items(), reverse=True)) for files in now)
        listing = SavedListing(pack(base), rows)  # type: ignore[arg-type]
        assert listing.dicts() == saved
        expected = naive(saved, now)
        assert listing.changed(now, 256) == expected  # type: ignore[arg-type]
        for si, name in expected:
            assert listing.identity(si, name) == saved[si].get(name)
        if len(expected) > 1:
            assert listing.changed(now, len(expected) - 1) is None  # type: ignore[arg-type]
        assert SavedListing(folded(pack(base), rows)).dicts() == saved  # type: ignore[arg-type]
