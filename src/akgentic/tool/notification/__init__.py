"""NotificationTool: delayed messages an agent schedules to itself.

The card (:class:`NotificationTool`) and its three capability params; the team
singleton that holds and delivers the entries (:class:`NotificationActor`, named
``#NotificationTool``); and the models — entries, the actor's config and persisted
state, the delta it emits and the pure reducer that rebuilds the state from those
deltas. See ``README.md`` beside this file for the full contract.
"""

from akgentic.tool.notification.actor import NotificationActor, NotificationTick
from akgentic.tool.notification.models import (
    AGENT_MESSAGE_CLASS,
    FALLBACK_MESSAGE_CLASS,
    NOTIFICATION_TOOL_NAME,
    NotificationConfig,
    NotificationDelta,
    NotificationState,
    PendingNotification,
    apply_notification_event,
    default_message_class,
    replay_notification_state,
    resolve_message_class,
)
from akgentic.tool.notification.tool import (
    CancelNotification,
    NotificationTool,
    PendingNotifications,
    RegisterNotification,
)

__all__ = [
    "AGENT_MESSAGE_CLASS",
    "FALLBACK_MESSAGE_CLASS",
    "NOTIFICATION_TOOL_NAME",
    "CancelNotification",
    "NotificationActor",
    "NotificationConfig",
    "NotificationDelta",
    "NotificationState",
    "NotificationTick",
    "NotificationTool",
    "PendingNotification",
    "PendingNotifications",
    "RegisterNotification",
    "apply_notification_event",
    "default_message_class",
    "replay_notification_state",
    "resolve_message_class",
]
