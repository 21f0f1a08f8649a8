"""akgentic.server: teams over HTTP, with their events on resumable SSE streams.

Seed 003's runtime, made team-aware: a conversation is a team created from a card;
``POST .../messages`` is fire-and-forget (202 once committed); what the team does comes
on ``GET .../events``, which is the team's stored log, so a client that drops its
connection resumes with ``Last-Event-ID`` and misses nothing. See README.md beside this
file for the endpoints and the event protocol. Needs the ``server`` extra.
"""

from akgentic.server.app import create_app
from akgentic.server.cards import CardError, CardRegistry
from akgentic.server.serve import BackgroundServer, load_skills_into, serve
from akgentic.server.settings import InsecureServerError, ServerSettings, is_loopback

__all__ = [
    "BackgroundServer",
    "CardError",
    "CardRegistry",
    "InsecureServerError",
    "ServerSettings",
    "create_app",
    "is_loopback",
    "load_skills_into",
    "serve",
]
