"""A team's prompt economy, read from its event log: :func:`team_usage`.

Every model request a member made is a ``PromptAccountingEvent`` in the log; the report
adds them up per member and per card (``akgentic.agent.accounting.usage_report``). It
reads the log whether the team runs or not, in this process or another.
"""

from __future__ import annotations

from uuid import UUID

from akgentic.agent.accounting import UsageReport, accounting_events, usage_report
from akgentic.storage import StorageBundle

__all__ = ["team_usage"]

BATCH = 1000


def team_usage(storage: StorageBundle, team_id: UUID, team: str = "") -> UsageReport:
    """The usage report of team ``team_id`` (``team`` names it in the report). A record
    that cannot be decoded is skipped: it is reported where the log is listed."""
    events = []
    next_seq = 1
    while True:
        batch = storage.events.read(team_id, from_seq=next_seq, limit=BATCH)
        events += accounting_events(record.message for record in batch if record.ok)
        if len(batch) < BATCH:
            break
        next_seq = batch[-1].last + 1
    return usage_report(events, team=team or str(team_id))
