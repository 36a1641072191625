"""bench.ere.plan_groups: the grep baseline splits the patterns only where the split is cheaper."""

from __future__ import annotations

from bench.ere import plan_groups


def _costs(blowup: set[str]):
    calls: list[tuple[tuple[str, ...], float | None]] = []

    def cost(group: list[str], limit: float | None) -> float | None:
        seconds = 0.01 + 0.001 * len(group)  # a grep run: start-up plus a little per pattern
        if len(blowup & set(group)) > 1:  # these together make grep's automaton explode
            seconds = 10.0
        calls.append((tuple(group), limit))
        return None if limit is not None and seconds > limit * 1.5 else seconds

    return cost, calls


def test_patterns_that_do_not_blow_up_together_stay_one_group():
    cost, _ = _costs(set())
    patterns = [f"p{i}" for i in range(16)]
    assert plan_groups(patterns, cost) == [patterns]


def test_a_union_that_blows_up_is_split_and_the_rest_kept_together():
    patterns = [f"p{i}" for i in range(16)]
    cost, calls = _costs({"p1", "p14"})
    groups = plan_groups(patterns, cost)
    assert sorted(p for g in groups for p in g) == sorted(patterns)  # nothing left out, nothing twice
    assert not any({"p1", "p14"} <= set(g) for g in groups)
    assert groups == [patterns[:8], patterns[8:]]
    whole = [limit for group, limit in calls if len(group) == 16]
    assert whole and whole[0] is not None  # the losing union was given a limit, not timed to its end
