"""Monitors' schedules (``core.schedules``): what is accepted, and when the next run is —
once after a downtime, never closer than five minutes to the last."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from core.schedules import MIN_INTERVAL, Schedule, ScheduleError

DUE = datetime(2026, 11, 27, 5, 5, tzinfo=UTC)


def at(hour: int, minute: int, second: int = 0, day: int = 27) -> datetime:
    return datetime(2026, 11, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize("body", [
    {"every": 300}, {"every": 86400}, {"cron": "*/5 * * * *"}, {"cron": "0 9 * * MON-FRI"},
    {"cron": "@hourly"}, {"cron": "0 0 29 2 *"}, {"cron": "  0   6 * * 1 "},
])
def test_schedules_accepted(body):
    schedule = Schedule.of(body)
    assert schedule.as_dict() == ({"every": body["every"]} if "every" in body
                                  else {"cron": " ".join(body["cron"].split())})


@pytest.mark.parametrize(("body", "says"), [
    ({"every": MIN_INTERVAL - 1}, "every"),
    ({"every": True}, "every"),
    ({"every": 300.5}, "every"),
    ({"cron": "* * * * *"}, "closer than 300"),
    ({"cron": "0,1 9 * * *"}, "closer than 300"),
    ({"cron": "0 0 30 2 *"}, "ever runs"),
    ({"cron": "*/5 * * * * 30"}, "five fields"),
    ({"cron": "@reboot"}, "five fields"),
    ({"cron": "H * * * *"}, "five fields"),
    ({"cron": "R * * * *"}, "five fields"),  # croniter's extensions: not crontab
    ({"cron": "0 0 L * *"}, "five fields"),
    ({"cron": "0 0 * * 1#2"}, "five fields"),
    ({"cron": "0,1 0 1 * *"}, "closer than 300"),  # the close pair on the check's first day
    ({"cron": "61 * * * *"}, "ever runs"),
    ({"cron": "0 " * 60}, "five fields"),
    ({"cron": 5}, "as text"),
    ({}, "either"),
    ({"every": 300, "cron": "@daily"}, "either"),
])
def test_schedules_refused_say_why(body, says):
    with pytest.raises(ScheduleError, match=says):
        Schedule.of(body)


def test_every_keeps_its_phase_and_runs_once_after_a_downtime():
    every = Schedule(every=300)
    assert every.next_after(DUE, at(5, 5, 20)) == at(5, 10)
    assert every.next_after(DUE, at(9, 7)) == at(9, 10)  # 49 slots missed: one run, now
    assert every.next_after(DUE, at(5, 10)) == at(5, 15)


def test_cron_runs_in_utc_whatever_the_zone_of_the_time_given():
    """PostgreSQL hands back times in its session's zone: 06:00 is 06:00 UTC all the same."""
    plus_one = timezone(timedelta(hours=1))
    due = datetime(2026, 11, 27, 7, 0, tzinfo=plus_one)  # 06:00 UTC
    run = Schedule(cron="0 6 * * *").next_after(due, due)
    assert run == datetime(2026, 11, 28, 6, 0, tzinfo=UTC)


def test_cron_takes_the_next_slot_at_least_five_minutes_on():
    cron = Schedule(cron="*/5 * * * *")
    assert cron.next_after(DUE, at(5, 5, 40)) == at(5, 10)  # a late tick loses no slot
    assert cron.next_after(DUE, at(9, 7)) == at(9, 10)
    daily = Schedule(cron="0 6 * * *")
    assert daily.next_after(at(6, 0, day=26), at(6, 0, 3, day=26)) == at(6, 0)
    assert daily.next_after(DUE, DUE) - DUE >= timedelta(seconds=MIN_INTERVAL)
