"""The rule a lock's history meets when pods leave gracefully (rollouts, evictions, scale-down)."""


def assert_release_acquire(what, holders, new, old, replicas):
    """`holders`: the lock's holder after each change since the pods began to leave ("" for a
    release), in order: releases and acquisitions in turn, no pod acquiring twice, only `old`
    pods handing over, `new` last, one handover per leaving pod at most. Returns the acquirers."""
    assert holders and holders[-1] == new, f"{what}: last holder not {new}: {holders}"
    assert all(h == "" for h in holders[0::2]) and all(h for h in holders[1::2]), \
        f"{what}: a change that is neither a release nor an acquisition after one: {holders}"
    acquirers = holders[1::2]
    assert len(set(acquirers)) == len(acquirers), f"{what}: a pod acquired twice: {holders}"
    assert all(h in old for h in acquirers[:-1]), f"{what}: a new pod handed over: {holders}"
    assert len(holders) <= 2 * replicas, f"{what}: {len(holders)} lock changes: {holders}"
    return acquirers
