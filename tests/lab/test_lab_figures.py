"""The lab's figures on synthetic records: no-commit gaps (reference §4 item 5), elections, leader moves."""

from __future__ import annotations

import pytest

from rollwise.lab.figures import StatusSample, WriteRecord, elections, leader_moves, no_commit_gaps


def _steady(start: float, end: float, every: float = 0.05, latency: float = 0.004) -> list[WriteRecord]:
    n = round((end - start) / every)
    return [WriteRecord(start=start + i * every, end=start + i * every + latency, ok=True) for i in range(n)]


def test_a_steady_stream_of_commits_has_no_gap() -> None:
    assert no_commit_gaps(_steady(0, 10), since=0, until=10) == []


def test_an_outage_is_the_time_between_the_commits_around_it_not_the_failed_attempts() -> None:
    before, after = _steady(0, 3), _steady(6, 10)
    # Requests sent during the outage hang to their 1 s deadline and fail; the last ones before quorum returns
    # succeed late, at 6.0 — counting failures would under-report the outage by up to the deadline.
    hung = [WriteRecord(start=3 + i * 0.05, end=4 + i * 0.05, ok=False) for i in range(40)]
    late = [WriteRecord(start=5.2, end=6.001, ok=True)]
    gaps = no_commit_gaps(before + hung + late + after, since=0, until=10)
    assert len(gaps) == 1
    start, end = gaps[0]
    assert start == pytest.approx(2.954) and end == pytest.approx(6.001)


def test_gaps_at_the_window_edges_count_and_commits_outside_it_do_not() -> None:
    records = _steady(0, 2) + _steady(4, 5)
    gaps = no_commit_gaps(records, since=1, until=6)
    assert [round(a, 3) for a, _ in gaps] == [1.954, 4.954]
    assert [round(b, 3) for _, b in gaps] == [4.004, 6]


@pytest.mark.parametrize(("pause", "counted"), [(0.2, False), (0.25, True)])
def test_only_gaps_longer_than_the_threshold_count(pause: float, counted: bool) -> None:
    records = [WriteRecord(start=0.9, end=1.0, ok=True), WriteRecord(start=1.0, end=1.0 + pause, ok=True)]
    gaps = no_commit_gaps(records, since=0.9, until=1.0 + pause + 0.1)
    assert ((1.0, 1.0 + pause) in gaps) is counted


def test_an_empty_window_has_no_gap() -> None:
    assert no_commit_gaps([], since=5, until=5) == []


def test_a_window_without_any_commit_is_one_gap() -> None:
    assert no_commit_gaps([WriteRecord(start=1, end=2, ok=False)], since=0, until=3) == [(0, 3)]


def _s(t: float, member: str, leader: int, term: int) -> StatusSample:
    return StatusSample(t=t, member=member, leader=leader, term=term)


def test_elections_are_term_increments_inside_the_window() -> None:
    samples = [_s(0, "a", 1, 2), _s(1, "b", 1, 2), _s(5, "b", 2, 3), _s(6, "c", 0, 5), _s(20, "a", 1, 9)]
    assert elections(samples, since=2, until=10) == 3  # terms 2 -> 5, seen by any member; 9 is after the window


def test_elections_with_no_sample_before_the_window_start_from_the_lowest_term_seen() -> None:
    assert elections([_s(3, "a", 1, 4), _s(4, "a", 1, 6)], since=0, until=10) == 2
    assert elections([], since=0, until=10) == 0


def test_leader_moves_count_changes_to_another_member_and_ignore_stale_or_leaderless_reports() -> None:
    samples = [
        _s(0.0, "a", 1, 2),
        _s(1.0, "b", 0, 2),  # no leader known: not a move
        _s(2.0, "b", 2, 3),  # moved to 2
        _s(2.1, "a", 1, 2),  # a stale report from an older term
        _s(3.0, "c", 2, 4),  # re-elected, same leader: not a move
        _s(4.0, "c", 3, 5),  # moved to 3
    ]
    assert leader_moves(samples, since=0.5, until=10) == 2
    assert leader_moves(samples, since=2.5, until=10) == 1
    assert leader_moves(samples, since=0.5, until=3.5) == 1
